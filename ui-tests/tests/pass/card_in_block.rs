//! The design card's sentence inside an `#[adapter]` block: a block that names no system
//! (each method names its own), a block that names it (a method may repeat it), and a
//! derive that names it too. Where the levels agree, nothing is said.
use outbound_guard::{CircuitBreakerError, Guards, Settings};

#[derive(Debug)]
pub struct PortError(#[allow(dead_code)] CircuitBreakerError);

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError(err)
    }
}

#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl SberAdapter {
    #[circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<u64, PortError> {
        Ok(1)
    }
}

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl SberAdapter {
    #[circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn confirm(&self) -> Result<u64, PortError> {
        Ok(2)
    }

    pub async fn refund(&self) -> Result<u64, PortError> {
        Ok(3)
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "customer")]
pub struct CustomerAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(system = "customer", error_map = PortError::unavailable)]
impl CustomerAdapter {
    #[circuit_breaker(system = "customer", error_map = PortError::unavailable)]
    pub async fn name(&self) -> Result<u64, PortError> {
        Ok(4)
    }

    pub async fn email(&self) -> Result<u64, PortError> {
        Ok(5)
    }
}

impl CustomerAdapter {
    #[outbound_guard::circuit_breaker(system = "customer", error_map = PortError::unavailable)]
    pub async fn address(&self) -> Result<u64, PortError> {
        Ok(6)
    }
}

fn main() {
    let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
    let guards = Guards::new(&settings);
    let sber = SberAdapter { guard: guards.get("sber").unwrap() };
    let customer = guards.adapter(|guard| CustomerAdapter { guard }).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        let sum = sber.register().await.unwrap() + sber.confirm().await.unwrap() + sber.refund().await.unwrap();
        assert_eq!(sum, 6);
        let sum = customer.name().await.unwrap() + customer.email().await.unwrap() + customer.address().await.unwrap();
        assert_eq!(sum, 15);
    });
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().calls, 3);
    assert_eq!(guards.get("customer").unwrap().breaker().snapshot().calls, 3);
}
