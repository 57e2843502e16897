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

use outbound_guard::adapter as guarded_block;

// Two `#[adapter]` on one block, one of them aliased: one error on the second.
#[guarded_block(system = "sber", error_map = PortError::unavailable)]
#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
