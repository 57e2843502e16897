//! The design card's sentence with `crate = path`, for a runtime known by another name.
extern crate outbound_guard as resilience;

use resilience::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(resilience::Guarded)]
#[outbound_guard(crate = ::resilience)]
pub struct SberAdapter {
    guard: resilience::Guard,
}

impl SberAdapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable, crate = ::resilience)]
    pub async fn register(&self) -> Result<u64, PortError> {
        Ok(1)
    }
}

fn main() {}
