// The derive's system is a constant, not a literal: one error on it, saying it is
// checked at compile time.
use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

const SBER: &str = "sber";

#[derive(Guarded)]
#[guarded(system = SBER)]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
