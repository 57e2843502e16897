// No system on the method, its block or its type's derive: one error, saying where
// it may be named.
use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
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
