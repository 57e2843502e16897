use resilience::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
pub struct Adapter {
    guard: resilience::Guard,
}

// A public method of an inherent block that is neither guarded nor marked.
#[resilience::adapter(system = "sber", error_map = PortError::unavailable)]
impl Adapter {
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }

    pub fn cached(&self) -> u32 {
        1
    }
}

fn main() {}