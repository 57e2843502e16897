//! A `sber` method must never count against another system's breaker, however its
//! adapter was built. An adapter whose type declares its system (`#[guarded(system = …)]`
//! on its derive) is refused where it is built with the wrong guard (`Guards::adapter`,
//! `wired`); and every guarded call, also of an adapter built from a struct literal, is
//! refused with `Cause::WrongGuard` naming both systems when its adapter holds another
//! system's guard, before it reaches that guard's bulkhead or breaker.

use outbound_guard::{
    Cause, CircuitBreakerError, Guarded, Guards, Settings, State, SystemAdapter, WiringError,
};

#[derive(Debug)]
struct PortError(Option<CircuitBreakerError>);

impl PortError {
    fn unavailable(error: CircuitBreakerError) -> Self {
        PortError(Some(error))
    }
}

/// The design card's form: the type names no system, the method does.
#[derive(Guarded)]
struct CardAdapter {
    guard: outbound_guard::Guard,
}

impl CardAdapter {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    async fn register(&self) -> Result<(), PortError> {
        Err(PortError(None))
    }

    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    async fn refund(&mut self) -> Result<(), PortError> {
        Ok(())
    }
}

/// A block that names its system, on a type that names none.
#[derive(Guarded)]
struct BlockAdapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable)]
impl BlockAdapter {
    async fn register(&self) -> Result<(), PortError> {
        Ok(())
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
        Err(PortError(None))
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

/// `port`'s refusal: `WrongGuard` of `wanted`, through the `held` guard.
fn refused_as_wrong_guard(port: PortError, wanted: &str, held: &str) {
    let refused = port.0.expect("the guard's refusal, through error_map");
    assert_eq!(refused.system(), held);
    assert!(
        matches!(refused.cause(), Cause::WrongGuard { wanted: w } if *w == wanted),
        "{refused}"
    );
    assert_eq!(refused.http_status(), 500);
    let message = refused.to_string();
    assert!(
        message.starts_with(&format!(
            "{held}: a `{wanted}` call reached this system's guard"
        )) && message.contains(&format!("guards.get(\"{wanted}\")")),
        "{message}"
    );
}

#[tokio::test]
async fn every_call_of_an_adapter_built_from_a_literal_with_the_wrong_guard_is_refused() {
    let guards = guards();
    let customer = || guards.get("customer").unwrap();
    // The card's form, `&self` and `&mut self`; a block naming its system; a type that
    // declares it: built from struct literals, nothing checks them where they are built.
    let card = CardAdapter { guard: customer() };
    let mut card_mut = CardAdapter { guard: customer() };
    let block = BlockAdapter { guard: customer() };
    let declared = SberAdapter { guard: customer() };
    for _ in 0..3 {
        refused_as_wrong_guard(card.register().await.unwrap_err(), "sber", "customer");
        refused_as_wrong_guard(card_mut.refund().await.unwrap_err(), "sber", "customer");
        refused_as_wrong_guard(block.register().await.unwrap_err(), "sber", "customer");
        refused_as_wrong_guard(declared.register().await.unwrap_err(), "sber", "customer");
    }
    // Nothing reached either breaker or bulkhead.
    for system in ["sber", "customer"] {
        let guard = guards.get(system).unwrap();
        assert_eq!(guard.breaker().snapshot().calls, 0, "{system}");
        assert_eq!(guard.breaker().state(), State::Closed, "{system}");
        assert_eq!(guard.in_flight(), 0, "{system}");
    }
}

#[tokio::test]
async fn the_cards_form_with_its_own_guard_counts_against_its_system_only() {
    let guards = guards();
    let card = CardAdapter {
        guard: guards.get("sber").unwrap(),
    };
    let block = BlockAdapter {
        guard: guards.get("sber").unwrap(),
    };
    assert!(card.register().await.unwrap_err().0.is_none());
    assert!(block.register().await.is_ok());
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().calls, 2);
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().failures, 1);
    assert_eq!(
        guards.get("customer").unwrap().breaker().snapshot().calls,
        0
    );
}

/// The adapter's literal in one crate (`outbound_guard_ui_tests`), the guards and a
/// second adapter with the same literal in another (this test): every call through the
/// right guard is admitted, whichever crate's literal it carries and in whatever order,
/// and one through another system's guard is refused.
#[tokio::test]
async fn the_right_guard_is_admitted_whichever_crate_names_the_system() {
    use outbound_guard_ui_tests::LibraryAdapter;

    let guards = guards();
    let library = LibraryAdapter {
        guard: guards.get("sber").unwrap(),
    };
    let card = CardAdapter {
        guard: guards.get("sber").unwrap(),
    };
    for _ in 0..3 {
        assert_eq!(library.register().await.unwrap(), 1);
        assert!(card.register().await.unwrap_err().0.is_none());
    }
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().calls, 6);
    let wrong = LibraryAdapter {
        guard: guards.get("customer").unwrap(),
    };
    let refused = wrong.register().await.unwrap_err().0;
    assert!(
        matches!(refused.cause(), Cause::WrongGuard { wanted } if *wanted == "sber"),
        "{refused}"
    );
    assert_eq!(
        guards.get("customer").unwrap().breaker().snapshot().calls,
        0
    );
}
