//! A generic adapter, and the derive's `#[guard]` marker.
use outbound_guard::{CircuitBreakerError, Guarded};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

pub trait Transport: Send + Sync {
    fn send(&self) -> u64;
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct Adapter<T: Transport> {
    #[guard]
    sber: outbound_guard::Guard,
    transport: T,
}

impl<T: Transport> Adapter<T> {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn register<'a>(&'a self, note: &'a str) -> Result<(u64, &'a str), PortError> {
        Ok((self.transport.send(), note))
    }
}

fn main() {}
