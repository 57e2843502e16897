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

#[resilience::adapter(system = "sber", error_map = PortError::unavailable)]
impl Adapter {
    #[unguarded]
    pub fn cached(&self) -> u32 {
        1
    }
}

fn main() {}