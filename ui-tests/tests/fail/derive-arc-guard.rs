use std::sync::Arc;

use resilience::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
pub struct Adapter {
    guard: Arc<resilience::Guard>,
}

impl Adapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
