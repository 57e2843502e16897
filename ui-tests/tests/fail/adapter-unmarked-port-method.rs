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

#[allow(async_fn_in_trait)]
pub trait Port {
    async fn call(&self) -> Result<(), PortError>;
    fn cached(&self) -> u32;
}

// A port method that is not async is neither guarded nor marked.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Port for Adapter {
    async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }

    fn cached(&self) -> u32 {
        1
    }
}

fn main() {}