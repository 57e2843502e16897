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

fn takes_str(_: &str) -> PortError {
    PortError
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = takes_str)]
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}

fn main() {}
