// The derive declares no system, and the type has two `#[adapter]` blocks: one error
// per block, saying where to declare it.
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

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }

    pub async fn confirm(&self) -> Result<(), PortError> {
        Ok(())
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    pub async fn refund(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
