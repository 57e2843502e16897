//! A trait method written as rustc suggests when its future must be `Send`:
//! `fn … -> impl Future<Output = Result<…>> + Send { async move { … } }`.
use std::future::Future;

use outbound_guard::{CircuitBreakerError, Guarded};

#[derive(Debug, PartialEq)]
pub struct PortError(String);

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError(err.to_string())
    }
}

pub trait PaymentPort {
    fn register(&self, amount: u64) -> impl Future<Output = Result<u64, PortError>> + Send;
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl PaymentPort for SberAdapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    fn register(&self, amount: u64) -> impl Future<Output = Result<u64, PortError>> + Send {
        async move {
            if amount == 0 {
                return Err(PortError("zero".into()));
            }
            Ok(amount * 2)
        }
    }
}

fn main() {
    let settings = outbound_guard::Settings::parse("[systems.sber]", "inline").unwrap();
    let adapter = std::sync::Arc::new(SberAdapter {
        guard: outbound_guard::Guard::new(settings.system("sber").unwrap()),
    });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        // `Send`: it can be spawned.
        let spawned = tokio::spawn({
            let adapter = adapter.clone();
            async move { adapter.register(21).await }
        });
        assert_eq!(spawned.await.unwrap(), Ok(42));
        assert_eq!(adapter.register(0).await, Err(PortError("zero".into())));
        assert_eq!(adapter.guard.breaker().snapshot().failures, 1);
    });
}
