// A method names `customer`, its type's derive declares `sber`: one error, on the
// method's literal.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(system = "customer", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
