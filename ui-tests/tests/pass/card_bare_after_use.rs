//! The design card's sentence bare, after `use outbound_guard::circuit_breaker;`, as
//! `docs/adapters.md` first shows it: on an inherent method and on a trait impl's.
use outbound_guard::{circuit_breaker, CircuitBreakerError, Guards, Settings};

#[derive(Debug)]
pub struct PaymentPortError(#[allow(dead_code)] CircuitBreakerError);

impl PaymentPortError {
    fn system_unavailable(err: CircuitBreakerError) -> Self {
        PaymentPortError(err)
    }
}

trait PaymentPort {
    async fn register(&self, amount: u64) -> Result<u64, PaymentPortError>;
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl SberAdapter {
    #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
    pub async fn refund(&self, amount: u64) -> Result<u64, PaymentPortError> {
        Ok(amount)
    }
}

impl PaymentPort for SberAdapter {
    #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
    async fn register(&self, amount: u64) -> Result<u64, PaymentPortError> {
        Ok(amount + 1)
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let guards = Guards::new(&settings);
    let sber = SberAdapter { guard: guards.get("sber").unwrap() };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(sber.refund(1).await.unwrap(), 1);
        assert_eq!(sber.register(1).await.unwrap(), 2);
    });
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().calls, 2);
}
