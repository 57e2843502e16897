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

// The card under an alias inside an `#[adapter]` block: the block cannot tell it is a
// refinement, so the method would be guarded twice; one error saying how to refine it.
#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    #[cb(slow_as_error)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
