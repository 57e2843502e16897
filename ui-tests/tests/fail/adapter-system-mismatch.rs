// The block names `sber`, the derive declares `customer`: one error, on the block's
// literal.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "customer")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }

    pub async fn confirm(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
