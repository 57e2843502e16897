use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

// A public method of an inherent block that is neither guarded nor marked.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }

    pub fn cached(&self) -> u32 {
        1
    }
}

fn main() {}