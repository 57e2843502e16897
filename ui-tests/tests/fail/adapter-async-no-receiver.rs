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

// An async associated function without `self` in an `#[adapter]` block: it cannot
// reach the guard; one error saying what to do.
#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    pub async fn connect(guard: outbound_guard::Guard) -> Result<Self, PortError> {
        Ok(SberAdapter { guard })
    }

    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
