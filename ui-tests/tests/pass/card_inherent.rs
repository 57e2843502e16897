//! The design card's sentence, verbatim, on an adapter's public async method: the type
//! derives `Guarded` and names no system, the method names it. It guards: a forced-open
//! breaker refuses the call through `error_map`, without running the body.
use std::sync::atomic::{AtomicU32, Ordering};

use outbound_guard::{Cause, CircuitBreakerError, Guards, ManualAction, Settings};

#[derive(Debug)]
pub struct PaymentRef(u64);

#[derive(Debug)]
pub struct Order(u64);

#[derive(Debug)]
pub enum PaymentPortError {
    SystemUnavailable(CircuitBreakerError),
}

impl PaymentPortError {
    fn system_unavailable(err: CircuitBreakerError) -> Self {
        PaymentPortError::SystemUnavailable(err)
    }
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
    sent: AtomicU32,
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
    pub async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        Ok(PaymentRef(order.0))
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
    let guards = Guards::new(&settings);
    let adapter = SberAdapter { guard: guards.get("sber").unwrap(), sent: AtomicU32::new(0) };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(adapter.register(&Order(7)).await.unwrap().0, 7);
        guards.manual("sber", ManualAction::ForceOpen).unwrap();
        let PaymentPortError::SystemUnavailable(refused) = adapter.register(&Order(8)).await.unwrap_err();
        assert_eq!(refused.cause(), &Cause::ForcedOpen);
        assert_eq!(adapter.sent.load(Ordering::SeqCst), 1);
    });
}
