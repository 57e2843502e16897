use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

// The design card's sentence twice on one method: one error on the second, which
// would take a second permit and count each call twice.
impl SberAdapter {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
