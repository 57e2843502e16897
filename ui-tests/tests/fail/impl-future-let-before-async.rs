use resilience::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
pub struct Adapter {
    guard: resilience::Guard,
}

use std::future::Future;

impl Adapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub fn call(&self) -> impl Future<Output = Result<(), PortError>> + Send + '_ {
        let answer = Ok(());
        async move { answer }
    }
}

fn main() {}