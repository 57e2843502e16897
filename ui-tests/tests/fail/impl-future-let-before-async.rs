use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

use std::future::Future;

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub fn call(&self) -> impl Future<Output = Result<(), PortError>> + Send + '_ {
        let answer = Ok(());
        async move { answer }
    }
}

fn main() {}