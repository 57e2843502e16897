//! `#[outbound_guard::adapter]` on a trait impl and on an inherent block: every async
//! method guarded, a refinement, an opt-out with a reason, a closure `error_map`, and
//! the adapter built through `Guards::adapter`, which knows its system from the derive.
use std::future::Future;

use outbound_guard::{CircuitBreakerError, Guarded, Guards, Settings, SystemAdapter};

#[derive(Debug, PartialEq)]
pub enum PortError {
    Unavailable(&'static str),
    Declined,
}

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError::Unavailable(if err.is_rejection() { "rejected" } else { "cut short" })
    }

    fn is_outage(&self) -> bool {
        matches!(self, PortError::Unavailable(_))
    }
}

#[allow(async_fn_in_trait)]
pub trait PaymentPort {
    async fn register(&self, amount: u64) -> Result<u64, PortError>;
    fn confirm(&self, id: u64) -> impl Future<Output = Result<u64, PortError>> + Send;
    fn fee(&self) -> u64;
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
    fee: u64,
}

#[outbound_guard::adapter(error_map = PortError::unavailable, failure_if = PortError::is_outage)]
impl PaymentPort for SberAdapter {
    async fn register(&self, amount: u64) -> Result<u64, PortError> {
        if amount == 0 {
            return Err(PortError::Declined);
        }
        Ok(amount + self.fee)
    }

    #[circuit_breaker(slow_as_error, error_map = |_| PortError::Unavailable("confirm"))]
    fn confirm(&self, id: u64) -> impl Future<Output = Result<u64, PortError>> + Send {
        async move { Ok(id) }
    }

    #[unguarded(reason = "a field read, no I/O")]
    fn fee(&self) -> u64 {
        self.fee
    }
}

#[derive(Guarded)]
#[guarded(system = "customer")]
pub struct CustomerAdapter {
    guard: outbound_guard::Guard,
    names: Vec<String>,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl CustomerAdapter {
    pub async fn name(&mut self, id: usize) -> Result<String, PortError> {
        self.names.get(id).cloned().ok_or(PortError::Declined)
    }

    // Private and not async: a helper, left alone.
    fn count(&self) -> usize {
        self.names.len()
    }

    #[unguarded(reason = "a field read, no I/O")]
    pub fn len(&self) -> usize {
        self.count()
    }
}

fn main() {
    assert_eq!(<SberAdapter as SystemAdapter>::SYSTEM, "sber");
    assert_eq!(<CustomerAdapter as SystemAdapter>::SYSTEM, "customer");
    let settings = Settings::parse(
        "[systems.sber]\n[systems.customer]\ncb_min_calls = 2\ncb_window_size = 2\ncb_failure_rate = 0.9",
        "inline",
    )
    .unwrap();
    let guards = Guards::new(&settings);
    let sber = guards.adapter(|guard| SberAdapter { guard, fee: 1 }).unwrap();
    let mut customer = guards
        .adapter(|guard| CustomerAdapter { guard, names: vec!["Ann".into()] })
        .unwrap();
    let wrong = guards.adapter(|_| SberAdapter { guard: guards.get("customer").unwrap(), fee: 1 });
    assert!(wrong.is_err());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        assert_eq!(sber.register(2).await, Ok(3));
        assert_eq!(sber.register(0).await, Err(PortError::Declined));
        assert_eq!(sber.confirm(5).await, Ok(5));
        assert_eq!(sber.fee(), 1);
        // Declined is not an outage: nothing counted against the breaker.
        assert_eq!(guards.get("sber").unwrap().breaker().snapshot().failures, 0);

        assert_eq!(customer.name(0).await, Ok("Ann".to_owned()));
        assert_eq!(customer.len(), 1);
        assert_eq!(customer.name(9).await, Err(PortError::Declined));
        assert_eq!(customer.name(9).await, Err(PortError::Declined));
        // Every `Err` counts by default: two failures of two calls opened it.
        assert_eq!(customer.name(0).await, Err(PortError::Unavailable("rejected")));
    });
}
