//! The design card's sentence on a method of an `#[async_trait]` impl, which rewrites the
//! method before this attribute sees it.
use outbound_guard::{CircuitBreakerError, Guard, Settings};

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[async_trait::async_trait]
pub trait CustomerPort {
    async fn name(&self, id: u64) -> Result<String, PortError>;
}

#[derive(outbound_guard::Guarded)]
pub struct CustomerAdapter {
    guard: Guard,
}

#[async_trait::async_trait]
impl CustomerPort for CustomerAdapter {
    #[outbound_guard::circuit_breaker(system = "customer", error_map = PortError::unavailable)]
    async fn name(&self, id: u64) -> Result<String, PortError> {
        if id == 0 {
            return Err(PortError);
        }
        Ok(format!("customer {id}"))
    }
}

fn main() {
    let settings = Settings::parse("[systems.customer]", "inline").unwrap();
    let adapter = CustomerAdapter { guard: Guard::new(settings.system("customer").unwrap()) };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let name = runtime.block_on(adapter.name(7)).ok();
    assert_eq!(name.as_deref(), Some("customer 7"));
}
