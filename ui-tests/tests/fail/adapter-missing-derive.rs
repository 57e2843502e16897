// No `#[derive(Guarded)]` on a block's type: one error, however many methods the block
// guards (three here), saying to derive it with its system.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

pub struct Adapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    pub async fn register(&self) -> Result<(), PortError> {
        let _ = &self.guard;
        Ok(())
    }

    pub async fn confirm(&self) -> Result<(), PortError> {
        Ok(())
    }

    pub async fn refund(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
