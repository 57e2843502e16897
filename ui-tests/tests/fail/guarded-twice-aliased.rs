use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

use outbound_guard::circuit_breaker as cb;

// Twice under an alias: the macro cannot resolve `cb`, but the first expansion leaves
// its mark, which the second finds.
impl SberAdapter {
    #[cb(system = "sber", error_map = PortError::unavailable)]
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
