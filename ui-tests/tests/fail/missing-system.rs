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

impl Adapter {
    #[resilience::circuit_breaker(error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
