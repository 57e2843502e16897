//! The design card's sentence on a generic adapter, and on a generic `#[adapter]` block
//! naming the system its generic type's derive declares.
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

pub trait Transport: Send + Sync {
    fn send(&self) -> u64;
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter<T> {
    guard: outbound_guard::Guard,
    transport: T,
}

impl<T: Transport> SberAdapter<T> {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<u64, PortError> {
        Ok(self.transport.send())
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "customer")]
pub struct CustomerAdapter<'a, T: Transport> {
    guard: outbound_guard::Guard,
    transport: &'a T,
}

#[outbound_guard::adapter(system = "customer", error_map = PortError::unavailable)]
impl<'a, T: Transport> CustomerAdapter<'a, T> {
    pub async fn name(&self) -> Result<u64, PortError> {
        Ok(self.transport.send())
    }
}

fn main() {}
