// The design card's sentence with a misspelt system: one error on the literal, with a
// "did you mean".
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(system = "sbr", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
