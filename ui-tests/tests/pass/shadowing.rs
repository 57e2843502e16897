//! The expansion uses absolute paths only: a user's `core`, `Option`, `Result` and
//! `Clone` in scope change nothing.
#![allow(dead_code)]

mod core {}
struct Option;
struct Clone;
type Result<T> = std::result::Result<T, PortError>;

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

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<u64> {
        Ok(1)
    }

    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn bump(&mut self) -> Result<u64> {
        Ok(2)
    }
}

fn main() {}
