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

#[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
pub struct Other;

fn main() {}
