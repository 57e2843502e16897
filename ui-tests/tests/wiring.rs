//! A `sber` method must never count against another system's breaker. Every adapter
//! knows its system (`#[guarded(system = …)]` on its derive, which its `#[adapter]`
//! blocks and `#[circuit_breaker]` methods call), and is refused where it is built with
//! the wrong guard, whichever way its methods are guarded, before any call is made.

use outbound_guard::{
    CircuitBreakerError, Guarded, Guards, Settings, State, SystemAdapter, WiringError,
};

#[derive(Debug)]
struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
struct SberAdapter {
    guard: outbound_guard::Guard,
}

impl SberAdapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Err(PortError)
    }
}

#[derive(Guarded)]
#[guarded(system = "customer")]
struct CustomerAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl CustomerAdapter {
    async fn name(&self) -> Result<(), PortError> {
        Ok(())
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
struct DeclaredAdapter {
    guard: outbound_guard::Guard,
}

fn guards() -> Guards {
    let settings = Settings::parse(
        "[systems.sber]\n[systems.customer]\ncb_min_calls = 1\ncb_window_size = 1",
        "inline",
    )
    .unwrap();
    Guards::new(&settings)
}

#[test]
fn a_lone_method_adapter_with_the_wrong_guard_is_refused_where_it_is_built() {
    let guards = guards();
    let customer = guards.get("customer").unwrap();
    let err = guards
        .adapter(|_| SberAdapter {
            guard: customer.clone(),
        })
        .err()
        .expect("a sber adapter built with the customer guard");
    let message = err.to_string();
    assert!(
        message.contains("calls `sber` but was built with the `customer` guard"),
        "{message}"
    );
    let err = SberAdapter { guard: customer }
        .wired()
        .err()
        .expect("a sber adapter built with the customer guard");
    assert_eq!((err.wanted(), err.held()), ("sber", "customer"));
    // Nothing was called, so nothing reached the customer breaker.
    let customer = guards.get("customer").unwrap();
    assert_eq!(customer.breaker().snapshot().calls, 0);
    assert_eq!(customer.breaker().state(), State::Closed);
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

#[test]
fn the_wrong_guard_is_refused_where_the_adapter_is_built() {
    let guards = guards();
    let sber = guards.get("sber").unwrap();
    let err = guards
        .adapter(|_| CustomerAdapter {
            guard: sber.clone(),
        })
        .err()
        .expect("a customer adapter built with the sber guard");
    let WiringError::WrongGuard(wrong) = &err else {
        panic!("{err}");
    };
    assert_eq!((wrong.wanted(), wrong.held()), ("customer", "sber"));
    let message = err.to_string();
    assert!(
        message.contains("calls `customer` but was built with the `sber` guard")
            && message.contains("guards.get(\"customer\")"),
        "{message}"
    );
    let err = DeclaredAdapter {
        guard: guards.get("customer").unwrap(),
    }
    .wired()
    .err()
    .expect("a sber adapter built with the customer guard");
    assert_eq!((err.wanted(), err.held()), ("sber", "customer"));
}

#[tokio::test]
async fn the_right_guard_is_handed_over_by_the_guards() {
    let guards = guards();
    let adapter = guards
        .adapter(|guard| CustomerAdapter { guard })
        .expect("the customer guard");
    assert!(adapter.name().await.is_ok());
    assert_eq!(
        guards.get("customer").unwrap().breaker().snapshot().calls,
        1
    );
    assert!(guards.adapter(|guard| DeclaredAdapter { guard }).is_ok());
    assert_eq!(<DeclaredAdapter as SystemAdapter>::SYSTEM, "sber");
}

#[test]
fn a_system_the_settings_lack_is_an_error_too() {
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let err = Guards::new(&settings)
        .adapter(|guard| CustomerAdapter { guard })
        .err()
        .expect("no customer system");
    assert!(matches!(err, WiringError::UnknownSystem(_)), "{err}");
}
