// A lone `#[circuit_breaker]` names the system its type's derive declares: one error
// on it, saying the system is declared once, on the derive.
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

impl Adapter {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
