//! `#[outbound_guard::adapter(error_map = …)]` without `system`: the block takes its
//! type's, declared once on the derive (and checked against resilience.toml there). A
//! trait impl, an inherent block and a generic block; each call goes through the
//! type's system's guard.
use outbound_guard::{CircuitBreakerError, Guard, Guarded, Guards, Settings};

#[derive(Debug, PartialEq)]
pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[allow(async_fn_in_trait)]
pub trait PaymentPort {
    async fn register(&self, amount: u64) -> Result<u64, PortError>;
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl PaymentPort for SberAdapter {
    async fn register(&self, amount: u64) -> Result<u64, PortError> {
        Ok(amount)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl SberAdapter {
    // A method may still refine the block's other arguments.
    #[circuit_breaker(slow_as_error)]
    pub async fn status(&self) -> Result<u64, PortError> {
        Ok(1)
    }
}

pub trait Transport {
    fn id(&self) -> u64;
}

#[derive(Guarded)]
#[guarded(system = "customer")]
pub struct CustomerAdapter<T> {
    guard: Guard,
    transport: T,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl<T: Transport> CustomerAdapter<T> {
    pub async fn get(&mut self) -> Result<u64, PortError> {
        Ok(self.transport.id())
    }
}

struct Local;

impl Transport for Local {
    fn id(&self) -> u64 {
        7
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]\n[systems.customer]\n", "inline").unwrap();
    let guards = Guards::new(&settings);
    let sber = guards.adapter(|guard| SberAdapter { guard }).unwrap();
    let mut customer = guards
        .adapter(|guard| CustomerAdapter { guard, transport: Local })
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(sber.register(3).await, Ok(3));
        assert_eq!(sber.status().await, Ok(1));
        assert_eq!(customer.get().await, Ok(7));
        // Forced open, the block's calls are refused through the block's `error_map`.
        guards.get("sber").unwrap().breaker().act(outbound_guard::ManualAction::ForceOpen);
        assert_eq!(sber.register(3).await, Err(PortError));
        assert_eq!(customer.get().await, Ok(7));
    });
}
