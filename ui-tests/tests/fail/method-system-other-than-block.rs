// A method names `customer` in a block that names `sber`: one error, on the
// method's literal, naming both.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    #[circuit_breaker(system = "customer")]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }

    pub async fn confirm(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
