//! Annotated adapters against a real HTTP server on 127.0.0.1 through reqwest,
//! with the settings a service uses: this crate's own `resilience.toml` (the file the
//! attribute checked at compile time), loaded with `outbound_guard::settings!` and scaled
//! down through environment overrides. The breaker opens on 5xx at the file's rate, the
//! caller gets the mapped port error, slow responses trip it before the timeout,
//! half-open trials recover it, and the second system's adapter is untouched throughout.

use std::sync::Arc;
use std::time::Duration;

use outbound_guard::{Cause, Guards, State, SystemAdapter};
use outbound_guard_tests::adapters::{CustomerAdapter, PortError, SberAdapter};
use outbound_guard_tests::recorder::Recorder;
use outbound_guard_tests::upstream::{FakeUpstream, Fault};

mod common;
use common::recorded_guards;

/// The file's settings (sber: the guide's window 50, at least 10 calls, 30% for a
/// critical system, 3 trials) with its timings scaled down by environment variables, as
/// an operator would without a rebuild.
fn guards(extra: &[(&str, &str)]) -> (Guards, Arc<Recorder>) {
    let mut env = vec![
        ("CLIENT_SBER__CONNECT_TIMEOUT", "0.1"),
        ("CLIENT_SBER__READ_TIMEOUT", "0.3"),
        ("CLIENT_SBER__TOTAL_TIMEOUT", "0.5"),
        ("CLIENT_SBER__CB_SLOW_THRESHOLD", "0.05"),
        ("CLIENT_SBER__CB_OPEN_DURATION", "0.2"),
        ("CLIENT_CUSTOMER__CONNECT_TIMEOUT", "0.1"),
        ("CLIENT_CUSTOMER__READ_TIMEOUT", "0.3"),
        ("CLIENT_CUSTOMER__TOTAL_TIMEOUT", "0.5"),
        ("CLIENT_CUSTOMER__CB_SLOW_THRESHOLD", "0.05"),
    ];
    env.extend_from_slice(extra);
    let settings = outbound_guard::settings!(env = env).expect("the crate's settings are valid");
    let sber = settings.system("sber").unwrap();
    assert_eq!(sber.cb_failure_rate(), 0.30, "from the file");
    assert_eq!(
        sber.total_timeout(),
        Duration::from_millis(500),
        "from the environment"
    );
    recorded_guards(&settings)
}

struct Service {
    sber: SberAdapter,
    customer: CustomerAdapter,
    sber_server: FakeUpstream,
    customer_server: FakeUpstream,
    recorder: Arc<Recorder>,
}

async fn service(extra: &[(&str, &str)]) -> Service {
    let (guards, recorder) = guards(extra);
    let sber_server = FakeUpstream::start().await;
    let customer_server = FakeUpstream::start().await;
    Service {
        sber: SberAdapter::new(guards.get("sber").unwrap(), &sber_server.url()),
        customer: CustomerAdapter::new(guards.get("customer").unwrap(), &customer_server.url()),
        sber_server,
        customer_server,
        recorder,
    }
}

impl Service {
    fn sber_state(&self) -> State {
        self.sber.system_guard().breaker().state()
    }

    /// One customer call, which must be served, and the customer breaker untouched.
    async fn customer_is_untouched(&self) {
        assert_eq!(self.customer.get(7).await.unwrap(), "ok");
        let snapshot = self.customer.system_guard().breaker().snapshot();
        assert_eq!((snapshot.state, snapshot.failures), (State::Closed, 0));
        assert!(self.recorder.transitions_of("customer").is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_opens_on_5xx_at_the_configured_rate_and_the_caller_gets_the_port_error() {
    let s = service(&[]).await;
    // Two declined requests (4xx: the system answering, not an outage), five good
    // answers, then three 503s: 3 failures in 10 calls is the file's 30%.
    s.sber_server.script([Fault::Status(404); 2]);
    s.sber_server.script([Fault::Ok; 5]);
    s.sber_server.script([Fault::Status(503); 3]);
    for i in 1..=10 {
        assert_eq!(s.sber_state(), State::Closed, "closed before call {i}");
        let result = s.sber.register(i).await;
        match i {
            1..=2 => assert!(
                matches!(result, Err(PortError::Declined(404))),
                "{result:?}"
            ),
            3..=7 => assert_eq!(result.unwrap(), "ok"),
            _ => assert!(
                matches!(result, Err(PortError::Upstream(503))),
                "{result:?}"
            ),
        }
        s.customer_is_untouched().await;
    }
    assert_eq!(s.sber_state(), State::Open);
    let snapshot = s.sber.system_guard().breaker().snapshot();
    assert!(snapshot.retry_after.is_some());

    // Open: the caller gets the port's error, which carries the system and the cause;
    // nothing reaches Sber.
    match s.sber.register(11).await {
        Err(PortError::Unavailable(e)) => {
            assert_eq!(e.system(), "sber");
            assert!(matches!(e.cause(), Cause::Open { .. }));
            assert!(e.retry_after().unwrap() <= Duration::from_millis(200));
            assert!(e.to_string().starts_with("sber: circuit open"), "{e}");
        }
        other => panic!("expected PortError::Unavailable, got {other:?}"),
    }
    assert_eq!(s.sber_server.hits(), 10);
    s.customer_is_untouched().await;
    assert_eq!(s.customer_server.hits(), 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_responses_trip_it_before_the_timeout() {
    let s = service(&[("CLIENT_SBER__MAX_CONNECTIONS", "20")]).await;
    // 100 ms answers: slow (over 50 ms), far from the 500 ms total timeout.
    s.sber_server
        .always(Fault::Delay(Duration::from_millis(100)));
    let results = futures_util::future::join_all((1..=10).map(|i| s.sber.register(i))).await;
    assert!(
        results.iter().all(std::result::Result::is_ok),
        "slow answers are returned: {results:?}"
    );
    assert_eq!(
        s.sber_state(),
        State::Open,
        "ten slow calls: 100% of the window"
    );
    let counts = s.recorder.counts();
    assert_eq!(
        (counts.slow, counts.timeout),
        (10, 0),
        "opened before any timeout"
    );
    assert!(s.sber.register(11).await.unwrap_err().is_rejection());
    assert_eq!(s.sber_server.hits(), 10);
    s.customer_is_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_trials_recover_it() {
    let s = service(&[]).await;
    s.sber_server.script([Fault::Status(500); 10]);
    for i in 1..=10 {
        assert!(s.sber.register(i).await.is_err());
    }
    assert_eq!(s.sber_state(), State::Open);
    assert!(s.sber.register(11).await.unwrap_err().is_rejection());
    s.customer_is_untouched().await;

    tokio::time::sleep(Duration::from_millis(250)).await;
    for trial in 1..=3 {
        assert_eq!(s.sber.register(100 + trial).await.unwrap(), "ok");
        let expected = if trial < 3 {
            State::HalfOpen
        } else {
            State::Closed
        };
        assert_eq!(s.sber_state(), expected, "after trial {trial}");
    }
    assert_eq!(s.sber_server.hits(), 13);
    let (c, o, h) = (State::Closed, State::Open, State::HalfOpen);
    assert_eq!(
        s.recorder.transitions_of("sber"),
        vec![(c, o), (o, h), (h, c)]
    );
    assert_eq!(s.sber.register(200).await.unwrap(), "ok");
    s.customer_is_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sber_adapter_built_with_the_customer_guard_never_reaches_either() {
    let (guards, recorder) = guards(&[]);
    let server = FakeUpstream::start().await;
    // The design card's form, built from a struct literal: nothing checks it where it is
    // built, so each call is refused, naming both systems, before any request is sent.
    let sber = SberAdapter::new(guards.get("customer").unwrap(), &server.url());
    for id in 0..3 {
        let err = sber
            .register(id)
            .await
            .expect_err("a sber call through the customer guard");
        assert_eq!(err.cause(), Some(&Cause::WrongGuard { wanted: "sber" }));
        let message = err.to_string();
        assert!(message.contains("guards.get(\"sber\")"), "{message}");
    }
    assert_eq!(server.hits(), 0);
    assert_eq!(recorder.counts().total(), 0);
    let customer = guards.get("customer").unwrap();
    assert_eq!(customer.in_flight(), 0);
    assert_eq!(customer.breaker().snapshot().calls, 0);
    // A type that declares its system is refused where it is built.
    let err = CustomerAdapter::new(guards.get("sber").unwrap(), &server.url())
        .wired()
        .expect_err("a customer adapter holding the sber guard");
    assert!(
        err.to_string().contains("guards.get(\"customer\")"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cards_form_against_a_forced_open_breaker_answers_the_ports_error_without_calling() {
    let (guards, recorder) = guards(&[]);
    let server = FakeUpstream::start().await;
    let sber = SberAdapter::new(guards.get("sber").unwrap(), &server.url());
    assert_eq!(sber.register(1).await.unwrap(), "ok");
    assert_eq!(server.hits(), 1);
    guards
        .manual("sber", outbound_guard::ManualAction::ForceOpen)
        .unwrap();
    for id in 2..5 {
        let err = sber.register(id).await.expect_err("forced open");
        // The port's own error, holding the guard's refusal: no raw breaker error.
        assert!(matches!(err, PortError::Unavailable(_)), "{err:?}");
        assert_eq!(err.cause(), Some(&Cause::ForcedOpen));
    }
    assert_eq!(
        server.hits(),
        1,
        "no request reached the upstream while forced open"
    );
    assert_eq!(recorder.counts().rejected(), 3);
    guards
        .manual("sber", outbound_guard::ManualAction::Reset)
        .unwrap();
    assert_eq!(sber.register(5).await.unwrap(), "ok");
    assert_eq!(server.hits(), 2);
}
