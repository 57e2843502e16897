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

fn by_value(_: PortError) -> bool {
    true
}

impl Adapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable, failure_if = by_value)]
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
