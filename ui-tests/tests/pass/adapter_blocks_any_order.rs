//! An adapter's methods split over several `#[outbound_guard::adapter]` blocks, in every
//! order: the port's trait impl first, last, and between two inherent blocks. The
//! system is declared once, on the derive; each block only checks that it agrees.
use outbound_guard::{CircuitBreakerError, Guarded, Guards, Settings, SystemAdapter};

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

macro_rules! adapter {
    ($name:ident) => {
        #[derive(Guarded)]
        #[guarded(system = "sber")]
        pub struct $name {
            guard: outbound_guard::Guard,
        }
    };
}

adapter!(TraitFirst);
adapter!(TraitLast);
adapter!(TraitBetween);

// The trait impl first.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl PaymentPort for TraitFirst {
    async fn register(&self, amount: u64) -> Result<u64, PortError> {
        Ok(amount)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl TraitFirst {
    pub async fn status(&self) -> Result<u64, PortError> {
        Ok(1)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl TraitFirst {
    pub async fn refund(&self) -> Result<u64, PortError> {
        Ok(2)
    }
}

// Two inherent blocks, then the trait impl.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl TraitLast {
    pub async fn status(&self) -> Result<u64, PortError> {
        Ok(1)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl TraitLast {
    pub async fn refund(&self) -> Result<u64, PortError> {
        Ok(2)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl PaymentPort for TraitLast {
    async fn register(&self, amount: u64) -> Result<u64, PortError> {
        Ok(amount)
    }
}

// The trait impl between two inherent blocks.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl TraitBetween {
    pub async fn status(&self) -> Result<u64, PortError> {
        Ok(1)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl PaymentPort for TraitBetween {
    async fn register(&self, amount: u64) -> Result<u64, PortError> {
        Ok(amount)
    }
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl TraitBetween {
    pub async fn refund(&self) -> Result<u64, PortError> {
        Ok(2)
    }
}

fn main() {
    assert_eq!(<TraitFirst as SystemAdapter>::SYSTEM, "sber");
    assert_eq!(<TraitLast as SystemAdapter>::SYSTEM, "sber");
    assert_eq!(<TraitBetween as SystemAdapter>::SYSTEM, "sber");
    let settings = Settings::parse("[systems.sber]\n", "inline").unwrap();
    let guards = Guards::new(&settings);
    let first = guards.adapter(|guard| TraitFirst { guard }).unwrap();
    let last = guards.adapter(|guard| TraitLast { guard }).unwrap();
    let between = guards.adapter(|guard| TraitBetween { guard }).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(first.register(3).await, Ok(3));
        assert_eq!(first.status().await, Ok(1));
        assert_eq!(first.refund().await, Ok(2));
        assert_eq!(last.register(3).await, Ok(3));
        assert_eq!(last.status().await, Ok(1));
        assert_eq!(last.refund().await, Ok(2));
        assert_eq!(between.register(3).await, Ok(3));
        assert_eq!(between.status().await, Ok(1));
        assert_eq!(between.refund().await, Ok(2));
    });
}
