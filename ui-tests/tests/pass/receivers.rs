//! `&mut self`, `self` by value and `self: Arc<Self>`: the guard is cloned so the body
//! keeps its own access to `self`.
use std::sync::Arc;

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
    sent: u64,
}

impl Adapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn bump(&mut self) -> Result<u64, PortError> {
        self.sent += 1;
        Ok(self.sent)
    }

    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn into_sent(self) -> Result<u64, PortError> {
        Ok(self.sent)
    }

    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn shared(self: Arc<Self>) -> Result<u64, PortError> {
        Ok(self.sent)
    }
}

fn main() {}
