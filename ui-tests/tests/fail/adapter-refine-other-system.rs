// A method of a block that names no system names another system than its type's
// derive declares: one error, on the method's literal.
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
    #[circuit_breaker(system = "customer")]
    pub async fn call(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}