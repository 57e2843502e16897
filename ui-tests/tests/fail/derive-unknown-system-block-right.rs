// The block names `sber`, the derive misspells it: one error, the did-you-mean on
// the derive's literal (no second one from the block's check that the two agree).
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

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl Adapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
