// A method of a trait impl names `customer`, its type's derive declares `sber`: one
// error, on the method's literal.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[allow(async_fn_in_trait)]
pub trait PaymentPort {
    async fn register(&self) -> Result<(), PortError>;
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl PaymentPort for SberAdapter {
    #[outbound_guard::circuit_breaker(system = "customer", error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
