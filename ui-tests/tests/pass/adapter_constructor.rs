//! The README's adapter under `#[adapter]`: its constructor, an associated function
//! without `self`, is left as it is; the method the block guards, and the card's
//! sentence inside the block (a refinement), are each guarded once: one permit taken
//! inside the call, one call counted after it.
use std::error::Error;

use outbound_guard::{CircuitBreakerError, Guard, Guards, Settings};

#[derive(Debug)]
pub struct PortError(#[allow(dead_code)] CircuitBreakerError);

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError(err)
    }
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: Guard,
}

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    pub fn new(guard: Guard) -> Result<Self, Box<dyn Error>> {
        Ok(SberAdapter { guard })
    }

    pub async fn register(&self) -> Result<usize, PortError> {
        Ok(self.guard.in_flight())
    }

    #[circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn confirm(&self) -> Result<usize, PortError> {
        Ok(self.guard.in_flight())
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let guards = Guards::new(&settings);
    let sber = SberAdapter::new(guards.get("sber").unwrap()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(sber.register().await.unwrap(), 1);
        assert_eq!(sber.confirm().await.unwrap(), 1);
    });
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().calls, 2);
}
