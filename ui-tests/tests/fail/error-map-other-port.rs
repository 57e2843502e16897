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

pub struct OtherPortError;

impl OtherPortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        OtherPortError
    }
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = OtherPortError::unavailable)]
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}