use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

// No `#[derive(Guarded)]`: the attribute cannot reach the guard, nor its system.
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        let _ = &self.guard;
        Ok(())
    }
}

fn main() {}
