// A method's system is a constant, not a literal: one error on it, saying it is
// checked at compile time.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

const SBER: &str = "sber";

#[derive(outbound_guard::Guarded)]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(system = SBER, error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
