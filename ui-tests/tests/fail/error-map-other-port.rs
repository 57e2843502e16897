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

pub struct OtherPortError;

impl OtherPortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        OtherPortError
    }
}

impl Adapter {
    #[resilience::circuit_breaker(system = "sber", error_map = OtherPortError::unavailable)]
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}