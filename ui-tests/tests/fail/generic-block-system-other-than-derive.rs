// A generic block names `sber`, its generic type's derive declares `customer`: one
// error, on the block's literal, however many methods the block has.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "customer")]
pub struct Adapter<T> {
    guard: outbound_guard::Guard,
    transport: T,
}

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl<T: Sync> Adapter<T> {
    pub async fn register(&self) -> Result<(), PortError> {
        let _ = &self.transport;
        Ok(())
    }

    pub async fn confirm(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
