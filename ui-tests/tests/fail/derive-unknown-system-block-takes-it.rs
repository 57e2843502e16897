// The derive misspells its system and the block takes the type's: one error, on the
// derive's literal.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sbr")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
