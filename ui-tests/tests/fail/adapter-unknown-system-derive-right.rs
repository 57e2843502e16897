// The derive declares `sber`, the block names (and misspells) it: one error on the
// block's literal, with a "did you mean".
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(system = "sbr", error_map = PortError::unavailable)]
impl Adapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
