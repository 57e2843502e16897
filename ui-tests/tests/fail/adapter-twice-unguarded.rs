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

// Two `#[adapter]` on one block whose every method is `#[unguarded]`: the first guards
// nothing, and the second is still one error.
#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    #[unguarded(reason = "a local health probe, no remote call")]
    pub async fn ping(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
