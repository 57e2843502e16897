//! No lint fires in user code because of the expansion: annotated adapters compiled
//! with `clippy::pedantic` and the stricter rustc lints denied. `cargo clippy
//! --workspace --all-targets -- -D warnings` (CI) checks the clippy half; every build
//! of this test checks the rustc half.
#![deny(
    clippy::pedantic,
    unused_qualifications,
    unused_results,
    unreachable_pub,
    missing_debug_implementations,
    rust_2018_idioms,
    trivial_casts,
    unused_lifetimes,
    single_use_lifetimes,
    unsafe_code
)]
#![allow(clippy::unused_async)]

use outbound_guard::{CircuitBreakerError, Guarded};

/// A port's error.
#[derive(Debug, PartialEq, Eq)]
enum PortError {
    Unavailable(CircuitBreakerError),
    Declined,
}

impl PortError {
    fn unavailable(err: CircuitBreakerError) -> Self {
        PortError::Unavailable(err)
    }

    fn is_outage(&self) -> bool {
        matches!(self, PortError::Unavailable(_))
    }
}

trait PaymentPort {
    async fn register(&self, amount: u64) -> Result<u64, PortError>;
}

#[derive(Debug, Guarded)]
#[guarded(system = "sber")]
struct SberAdapter {
    guard: outbound_guard::Guard,
    fee: u64,
}

impl PaymentPort for SberAdapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    async fn register(&self, amount: u64) -> Result<u64, PortError> {
        if amount == 0 {
            return Err(PortError::Declined);
        }
        Ok(amount + self.fee)
    }
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage,
        slow_as_error
    )]
    async fn refund(&mut self, amount: u64) -> Result<u64, PortError> {
        self.fee += 1;
        Ok(amount)
    }
}

trait CustomerPort {
    async fn name(&self, id: u64) -> Result<u64, PortError>;
    fn cached(&self) -> u64;
}

#[derive(Debug, Guarded)]
#[guarded(system = "customer")]
struct CustomerAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl CustomerPort for CustomerAdapter {
    async fn name(&self, id: u64) -> Result<u64, PortError> {
        Ok(id)
    }

    #[unguarded(reason = "a constant, no I/O")]
    fn cached(&self) -> u64 {
        7
    }
}

#[outbound_guard::adapter(
    error_map = |_| PortError::Declined,
    failure_if = PortError::is_outage
)]
impl CustomerAdapter {
    #[circuit_breaker(slow_as_error)]
    async fn by_value(self) -> Result<u64, PortError> {
        Ok(1)
    }
}

/// A generic adapter.
#[derive(Debug, Guarded)]
#[guarded(system = "customer")]
struct GenericAdapter<T> {
    guard: outbound_guard::Guard,
    transport: T,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl<T: Copy + Into<u64> + Sync> GenericAdapter<T> {
    async fn fetch(&self) -> Result<u64, PortError> {
        Ok(self.transport.into())
    }
}

/// A block that guards no method: its constructor is left alone and its one method is
/// unguarded, and the block's mark (what makes a second `#[adapter]` an error) fires no
/// lint.
#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl<T: Copy + Into<u64> + Sync> GenericAdapter<T> {
    fn new(guard: outbound_guard::Guard, transport: T) -> Self {
        Self { guard, transport }
    }

    #[unguarded(reason = "a field read, no I/O")]
    async fn transport(&self) -> Result<u64, PortError> {
        Ok(self.transport.into())
    }
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[tokio::test]
async fn annotated_methods_run() {
    let settings =
        outbound_guard::Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
    let mut adapter = SberAdapter {
        guard: outbound_guard::Guard::new(settings.system("sber").unwrap()),
        fee: 1,
    };
    // The guarded future stays `Send` (axum handlers, `tokio::spawn`).
    assert_eq!(assert_send(adapter.register(2)).await, Ok(3));
    assert_eq!(adapter.register(0).await, Err(PortError::Declined));
    assert_eq!(adapter.refund(5).await, Ok(5));
    assert_eq!(adapter.fee, 2);

    let customer = CustomerAdapter {
        guard: outbound_guard::Guard::new(settings.system("customer").unwrap()),
    };
    assert_eq!(assert_send(customer.name(4)).await, Ok(4));
    assert_eq!(customer.cached(), 7);
    assert_eq!(customer.by_value().await, Ok(1));

    let generic = GenericAdapter::new(
        outbound_guard::Guard::new(settings.system("customer").unwrap()),
        3_u32,
    );
    assert_eq!(assert_send(generic.fetch()).await, Ok(3));
    assert_eq!(generic.transport().await, Ok(3));
}
