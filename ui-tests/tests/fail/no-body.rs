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

pub trait PaymentPort {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError>;
}

fn main() {}
