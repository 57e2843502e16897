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

impl Adapter {
    #[resilience::unguarded(reason = "local cache, no I/O")]
    pub fn cached(&self) -> u32 {
        1
    }
}

fn main() {}