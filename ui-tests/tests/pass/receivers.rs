//! `&mut self`, `self` by value and `self: Arc<Self>`: the guard is cloned so the body
//! keeps its own access to `self`.
use std::sync::Arc;

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
    sent: u64,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn bump(&mut self) -> Result<u64, PortError> {
        self.sent += 1;
        Ok(self.sent)
    }

    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn into_sent(self) -> Result<u64, PortError> {
        Ok(self.sent)
    }

    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn shared(self: Arc<Self>) -> Result<u64, PortError> {
        Ok(self.sent)
    }
}

fn main() {}
