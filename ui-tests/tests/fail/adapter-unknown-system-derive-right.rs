// The derive declares `sber`, the block misspells it: one error, the did-you-mean on
// the block's literal (no second one from the check that the two agree).
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
