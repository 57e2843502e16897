// The design card's sentence naming `default`: one error, on `default`.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(system = "default", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
