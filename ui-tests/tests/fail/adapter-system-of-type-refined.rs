// In a block that takes its type's system, a method naming a system is an error: the
// adapter calls its type's system, and the name is written once, on the derive.
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

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    #[circuit_breaker(system = "sber")]
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
