use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

// The design card's sentence on a type without `#[derive(Guarded)]`: the attribute
// cannot reach the guard; one error, saying to add the derive.
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        let _ = &self.guard;
        Ok(())
    }
}

fn main() {}
