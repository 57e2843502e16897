//! A `sber` method must never count against another system's breaker: an adapter built
//! with the wrong guard is caught on its first call, before anything is recorded.

use resilience::{CircuitBreakerError, Guarded, Guards, Settings, State};

#[derive(Debug)]
struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
struct SberAdapter {
    guard: resilience::Guard,
}

impl SberAdapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Err(PortError)
    }
}

fn guards() -> Guards {
    let settings = Settings::parse(
        "[systems.sber]\n[systems.customer]\ncb_min_calls = 1\ncb_window_size = 1",
        "inline",
    )
    .unwrap();
    Guards::new(&settings)
}

#[tokio::test]
async fn the_wrong_guard_panics_naming_both_systems_and_counts_nothing() {
    let guards = guards();
    let customer = guards.get("customer").unwrap();
    let adapter = SberAdapter {
        guard: customer.clone(),
    };
    let panic = tokio::spawn(async move { adapter.register().await })
        .await
        .expect_err("the misrouted call must not run");
    let message = panic.into_panic();
    let message = message
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(
        message.contains("a `sber` method was called through the `customer` guard"),
        "{message}"
    );
    // Nothing reached the customer breaker: a single counted failure would open it.
    assert_eq!(customer.breaker().state(), State::Closed);
    assert_eq!(customer.breaker().snapshot().calls, 0);
    assert_eq!(customer.in_flight(), 0);
}

#[tokio::test]
async fn the_right_guard_counts_against_its_own_system_only() {
    let guards = guards();
    let adapter = SberAdapter {
        guard: guards.get("sber").unwrap(),
    };
    assert!(adapter.register().await.is_err());
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().failures, 1);
    assert_eq!(
        guards.get("customer").unwrap().breaker().snapshot().calls,
        0
    );
}
