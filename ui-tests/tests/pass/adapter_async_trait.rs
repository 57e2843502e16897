//! `#[outbound_guard::adapter]` and `#[async_trait]` in either order.
use outbound_guard::{CircuitBreakerError, Guarded, Guards, Settings};

#[derive(Debug, PartialEq)]
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

#[derive(Guarded)]
#[guarded(system = "customer")]
pub struct Before {
    guard: outbound_guard::Guard,
}

#[derive(Guarded)]
#[guarded(system = "customer")]
pub struct After {
    guard: outbound_guard::Guard,
}

// `#[async_trait]` runs first: the adapter guards the rewritten methods.
#[async_trait::async_trait]
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl CustomerPort for Before {
    async fn name(&self, id: u64) -> Result<String, PortError> {
        Ok(format!("before {id}"))
    }
}

// The adapter runs first: `#[async_trait]` rewrites the guarded methods.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
#[async_trait::async_trait]
impl CustomerPort for After {
    async fn name(&self, id: u64) -> Result<String, PortError> {
        Ok(format!("after {id}"))
    }
}

fn main() {
    let settings = Settings::parse("[systems.customer]", "inline").unwrap();
    let guards = Guards::new(&settings);
    let before = guards.adapter(|guard| Before { guard }).unwrap();
    let after = guards.adapter(|guard| After { guard }).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        let ports: [&(dyn CustomerPort + Sync); 2] = [&before, &after];
        assert_eq!(ports[0].name(1).await, Ok("before 1".to_owned()));
        assert_eq!(ports[1].name(2).await, Ok("after 2".to_owned()));
    });
    assert_eq!(guards.get("customer").unwrap().breaker().snapshot().calls, 2);
}
