//! The metrics as a recorder sees them: every series of every configured system at
//! startup, then each call, rejection and transition counted where it belongs.
//!
//! These are unit tests on purpose: the library's metrics code is compiled for its own
//! unit tests even without the `metrics` feature, so they run under a plain
//! `cargo test --workspace`. `tests/metrics.rs` checks the feature-on defaults.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use metrics::Unit;
use outbound_guard_settings::Settings;
use tokio::sync::oneshot::error::RecvError;

use crate::action::ManualAction;
use crate::call::CallOptions;
use crate::guard::Guard;
use crate::observer::{Observer, Transition};
use crate::registry::Guards;
use crate::state::State;
use crate::verdict::Verdict;
use outbound_guard_test_recorder::TestRecorder;

const SETTINGS: &str = r"
[systems.sber]
read_timeout = 10.0
total_timeout = 12.0
cb_slow_threshold = 5.0
cb_window_size = 10
cb_min_calls = 10
cb_failure_rate = 0.30
cb_open_duration = 30.0
cb_half_open_calls = 3
max_connections = 5
bulkhead_wait = 0.0

[systems.customer]
";

fn settings() -> Settings {
    Settings::parse(SETTINGS, "resilience.toml").unwrap()
}

/// A call admitted by `guard` (it holds a bulkhead permit and the breaker's permission)
/// and still running: it ends when the sender is used or dropped (then with an error).
async fn admitted(
    guard: &Guard,
) -> (
    tokio::sync::oneshot::Sender<()>,
    Pin<Box<impl Future<Output = GuardedOutput<(), RecvError>> + '_>>,
) {
    let (end, ended) = tokio::sync::oneshot::channel();
    let mut call = Box::pin(guard.call(ended));
    std::future::poll_fn(|cx| {
        assert!(
            call.as_mut().poll(cx).is_pending(),
            "admitted, still running"
        );
        Poll::Ready(())
    })
    .await;
    (end, call)
}

type GuardedOutput<T, E> = Result<Result<T, E>, crate::error::CircuitBreakerError>;

/// Guards whose metrics go to a fresh recorder.
fn guards_with_recorder() -> (Guards, Arc<TestRecorder>) {
    let recorder = TestRecorder::new();
    let guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings()).metrics(true).build()
    });
    (guards, recorder)
}

fn calls(r: &TestRecorder, system: &str, outcome: &str) -> Option<u64> {
    r.counter(&format!(
        r#"resilience_calls_total{{outcome="{outcome}",system="{system}"}}"#
    ))
}

fn rejections(r: &TestRecorder, system: &str, reason: &str) -> Option<u64> {
    r.counter(&format!(
        r#"resilience_rejections_total{{reason="{reason}",system="{system}"}}"#
    ))
}

fn transitions(r: &TestRecorder, system: &str, from: &str, to: &str) -> Option<u64> {
    r.counter(&format!(
        r#"resilience_transitions_total{{from="{from}",system="{system}",to="{to}"}}"#
    ))
}

fn state(r: &TestRecorder, system: &str, state: &str) -> Option<f64> {
    r.gauge(&format!(
        r#"resilience_state{{state="{state}",system="{system}"}}"#
    ))
}

/// The one state whose gauge is 1; every state gauge must be 0 or 1, exactly one 1.
fn shown_state(r: &TestRecorder, system: &str) -> &'static str {
    let states = ["closed", "open", "half_open", "forced_open", "disabled"];
    let ones: Vec<_> = states
        .iter()
        .filter(|s| state(r, system, s) == Some(1.0))
        .collect();
    for s in states {
        let v = state(r, system, s).expect("every state gauge is registered");
        assert!(v == 0.0 || v == 1.0, "{system} {s} = {v}");
    }
    assert_eq!(
        ones.len(),
        1,
        "{system}: exactly one state shown, got {ones:?}"
    );
    ones[0]
}

fn gauge(r: &TestRecorder, name: &str, system: &str) -> Option<f64> {
    r.gauge(&format!(r#"{name}{{system="{system}"}}"#))
}

fn durations(r: &TestRecorder, system: &str) -> Option<Vec<f64>> {
    r.histogram(&format!(
        r#"resilience_call_duration_seconds{{system="{system}"}}"#
    ))
}

async fn ok(guard: &Guard) {
    guard
        .call(async { Ok::<_, ()>(()) })
        .await
        .expect("admitted")
        .expect("succeeded");
}

async fn fail(guard: &Guard) {
    let answer = guard.call(async { Err::<(), _>("boom") }).await;
    assert_eq!(answer.expect("admitted"), Err("boom"));
}

fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.002
}

#[test]
fn every_configured_system_is_registered_at_startup_before_its_first_call() {
    let (_guards, r) = guards_with_recorder();
    for system in ["sber", "customer"] {
        for outcome in [
            "success",
            "failure",
            "slow",
            "timeout",
            "rejected",
            "cancelled",
        ] {
            assert_eq!(calls(&r, system, outcome), Some(0), "{system} {outcome}");
        }
        for reason in ["open", "half_open_full", "forced_open", "bulkhead_full"] {
            assert_eq!(rejections(&r, system, reason), Some(0), "{system} {reason}");
        }
        assert_eq!(shown_state(&r, system), "closed");
        assert_eq!(gauge(&r, "resilience_failure_rate", system), Some(0.0));
        assert_eq!(gauge(&r, "resilience_bulkhead_in_use", system), Some(0.0));
        assert_eq!(gauge(&r, "resilience_observing", system), Some(0.0));
        assert_eq!(durations(&r, system), Some(vec![]));
        // Every transition the breaker can make, at 0.
        let possible = [
            ("closed", "open"),
            ("open", "half_open"),
            ("half_open", "closed"),
            ("half_open", "open"),
            ("open", "closed"),
            ("forced_open", "closed"),
            ("disabled", "closed"),
            ("closed", "forced_open"),
            ("open", "forced_open"),
            ("half_open", "forced_open"),
            ("disabled", "forced_open"),
            ("closed", "disabled"),
            ("open", "disabled"),
            ("half_open", "disabled"),
            ("forced_open", "disabled"),
        ];
        for (from, to) in possible {
            assert_eq!(
                transitions(&r, system, from, to),
                Some(0),
                "{system} {from}→{to}"
            );
        }
        assert_eq!(transitions(&r, system, "closed", "half_open"), None);
        // An action that finds the breaker in its target state is no transition.
        for same in ["closed", "open", "half_open", "forced_open", "disabled"] {
            assert_eq!(transitions(&r, system, same, same), None, "{same}");
        }
        let registered = r
            .all_series()
            .into_iter()
            .filter(|s| {
                s.starts_with(super::TRANSITIONS_TOTAL)
                    && s.contains(&format!("system=\"{system}\""))
            })
            .count();
        assert_eq!(registered, possible.len(), "{system}");
    }
    assert_eq!(gauge(&r, "resilience_bulkhead_permits", "sber"), Some(4.0));
    assert_eq!(
        gauge(&r, "resilience_bulkhead_permits", "customer"),
        Some(8.0)
    );

    // A fixed bulkhead's limit is its permits.
    assert_eq!(gauge(&r, "resilience_bulkhead_limit", "sber"), Some(4.0));

    // Nothing else: 6 outcomes + 4 reasons + 5 states + 15 transitions + failure rate,
    // duration, in use, permits, limit, open period, retry hints, observing, and 2
    // reasons an observing breaker would have refused = 40 series per system.
    let all = r.all_series();
    assert_eq!(all.len(), 80, "{all:#?}");
    assert!(all.iter().all(|s| s.starts_with("resilience_")));

    // Described, with Prometheus' base units.
    assert_eq!(
        r.description("resilience_call_duration_seconds").unwrap().0,
        Some(Unit::Seconds)
    );
    assert_eq!(
        r.description("resilience_calls_total").unwrap().0,
        Some(Unit::Count)
    );
    for name in [
        "resilience_calls_total",
        "resilience_rejections_total",
        "resilience_state",
        "resilience_failure_rate",
        "resilience_call_duration_seconds",
        "resilience_bulkhead_in_use",
        "resilience_bulkhead_permits",
        "resilience_bulkhead_limit",
        "resilience_transitions_total",
        "resilience_open_period_seconds",
        "resilience_retry_hints_total",
    ] {
        assert!(!r.description(name).expect(name).1.is_empty(), "{name}");
    }
}

#[tokio::test(start_paused = true)]
async fn calls_are_counted_by_system_and_outcome_with_their_durations() {
    let (guards, r) = guards_with_recorder();
    let sber = guards.get("sber").unwrap();

    ok(&sber).await;
    ok(&sber).await;
    fail(&sber).await;

    // Slow: 6 s > the 5 s threshold; the value is still returned.
    let slow = sber
        .call(async {
            tokio::time::sleep(Duration::from_secs(6)).await;
            Ok::<_, ()>(7)
        })
        .await;
    assert_eq!(slow, Ok(Ok(7)));

    // Timeout: cut off at total_timeout, 12 s.
    let timed_out = sber.call(std::future::pending::<Result<(), ()>>()).await;
    assert_eq!(timed_out.unwrap_err().cause().as_str(), "timeout");

    // Cancelled: dropped mid-call.
    let cancelled = tokio::time::timeout(
        Duration::from_secs(1),
        sber.call(std::future::pending::<Result<(), ()>>()),
    )
    .await;
    assert!(cancelled.is_err());

    assert_eq!(calls(&r, "sber", "success"), Some(2));
    assert_eq!(calls(&r, "sber", "failure"), Some(1));
    assert_eq!(calls(&r, "sber", "slow"), Some(1));
    assert_eq!(calls(&r, "sber", "timeout"), Some(1));
    assert_eq!(calls(&r, "sber", "cancelled"), Some(1));
    assert_eq!(calls(&r, "sber", "rejected"), Some(0));

    // Durations of the calls that ran, in seconds; none for the cancelled one.
    let d = durations(&r, "sber").unwrap();
    assert_eq!(d.len(), 5, "{d:?}");
    assert_eq!(&d[..3], &[0.0, 0.0, 0.0]);
    assert!(approx(d[3], 6.0), "{d:?}");
    assert!(approx(d[4], 12.0), "{d:?}");

    // Failure, slow and timeout count against the window: 3 of 5.
    assert_eq!(gauge(&r, "resilience_failure_rate", "sber"), Some(0.6));
    assert_eq!(shown_state(&r, "sber"), "closed");
    assert_eq!(gauge(&r, "resilience_bulkhead_in_use", "sber"), Some(0.0));

    // The other system saw none of it.
    for outcome in [
        "success",
        "failure",
        "slow",
        "timeout",
        "rejected",
        "cancelled",
    ] {
        assert_eq!(calls(&r, "customer", outcome), Some(0), "{outcome}");
    }
    assert_eq!(durations(&r, "customer"), Some(vec![]));
}

#[tokio::test(start_paused = true)]
async fn transitions_state_and_rejections_follow_the_breaker() {
    let (guards, r) = guards_with_recorder();
    let sber = guards.get("sber").unwrap();

    // 7 successes and 2 failures: 2 of 9, below the 10 calls it needs.
    for _ in 0..7 {
        ok(&sber).await;
    }
    fail(&sber).await;
    fail(&sber).await;
    assert!(approx(
        gauge(&r, "resilience_failure_rate", "sber").unwrap(),
        2.0 / 9.0
    ));
    // The third failure: 3 of 10 = 30% ≥ 30%, open.
    fail(&sber).await;
    assert_eq!(transitions(&r, "sber", "closed", "open"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "open");
    // While open: the rate that tripped it, not an empty window's 0.
    assert!(approx(
        gauge(&r, "resilience_failure_rate", "sber").unwrap(),
        0.3
    ));

    // Rejected while open.
    let err = sber.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(err.cause().as_str(), "open");
    assert_eq!(calls(&r, "sber", "rejected"), Some(1));
    assert_eq!(rejections(&r, "sber", "open"), Some(1));

    // 30 s later, idle: a refresh (the `/metrics` handler's) shows it half-open, not
    // stuck open; then three trials succeed; closed.
    tokio::time::advance(Duration::from_secs(30)).await;
    assert_eq!(shown_state(&r, "sber"), "open", "nothing read it yet");
    guards.refresh();
    assert_eq!(transitions(&r, "sber", "open", "half_open"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "half_open");
    assert_eq!(gauge(&r, "resilience_failure_rate", "sber"), Some(0.0));
    ok(&sber).await;
    assert_eq!(transitions(&r, "sber", "open", "half_open"), Some(1));
    ok(&sber).await;
    ok(&sber).await;
    assert_eq!(transitions(&r, "sber", "half_open", "closed"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "closed");

    // Trials beyond the three are rejected as half_open_full.
    for _ in 0..10 {
        fail(&sber).await;
    }
    tokio::time::advance(Duration::from_secs(30)).await;
    let (end_first, first) = admitted(&sber).await;
    let (_end_second, second) = admitted(&sber).await;
    let (_end_third, third) = admitted(&sber).await;
    let err = sber.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(err.cause().as_str(), "half_open_full");
    assert_eq!(rejections(&r, "sber", "half_open_full"), Some(1));
    assert_eq!(gauge(&r, "resilience_bulkhead_in_use", "sber"), Some(3.0));
    // A trial fails: open again.
    drop(end_first); // the call ends with an error
    assert!(matches!(first.await, Ok(Err(_))));
    assert_eq!(transitions(&r, "sber", "half_open", "open"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "open");
    drop((second, third));
    assert_eq!(gauge(&r, "resilience_bulkhead_in_use", "sber"), Some(0.0));
    assert_eq!(calls(&r, "sber", "cancelled"), Some(2));

    assert_eq!(transitions(&r, "sber", "closed", "open"), Some(2));
    assert_eq!(calls(&r, "sber", "rejected"), Some(2));
    // The customer breaker never moved.
    assert_eq!(shown_state(&r, "customer"), "closed");
    assert_eq!(transitions(&r, "customer", "closed", "open"), Some(0));
}

#[tokio::test(start_paused = true)]
async fn operators_actions_are_counted_as_transitions() {
    let (guards, r) = guards_with_recorder();
    let sber = guards.get("sber").unwrap();

    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert_eq!(transitions(&r, "sber", "closed", "forced_open"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "forced_open");
    let err = sber.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(err.cause().as_str(), "forced_open");
    assert_eq!(rejections(&r, "sber", "forced_open"), Some(1));

    // Forcing open what is forced open already changes nothing.
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert_eq!(transitions(&r, "sber", "closed", "forced_open"), Some(1));

    guards.manual("sber", ManualAction::Disable).unwrap();
    assert_eq!(transitions(&r, "sber", "forced_open", "disabled"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "disabled");
    fail(&sber).await;
    assert_eq!(calls(&r, "sber", "failure"), Some(1));

    guards.manual("sber", ManualAction::Reset).unwrap();
    assert_eq!(transitions(&r, "sber", "disabled", "closed"), Some(1));
    assert_eq!(shown_state(&r, "sber"), "closed");
    assert_eq!(shown_state(&r, "customer"), "closed");
}

/// Every transition `observer` was handed.
#[derive(Default)]
struct Seen(std::sync::Mutex<Vec<(State, State)>>);

impl Observer for Seen {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.from, t.to));
    }
}

#[tokio::test(start_paused = true)]
async fn an_action_that_finds_its_target_state_is_a_no_op_for_every_action() {
    let seen = Arc::new(Seen::default());
    let recorder = TestRecorder::new();
    let guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings())
            .metrics(true)
            .observer(seen.clone())
            .build()
    });
    let sber = guards.get("sber").unwrap();
    let r = &recorder;
    let counted = || {
        let states = ["closed", "open", "half_open", "forced_open", "disabled"];
        states
            .iter()
            .flat_map(|from| states.iter().map(move |to| (*from, *to)))
            .filter_map(|(from, to)| transitions(r, "sber", from, to))
            .sum::<u64>()
    };

    // A closed breaker with a failure in its window: a reset empties the window, and
    // is no transition; a reset of the empty closed breaker then shows nothing at all.
    fail(&sber).await;
    assert_eq!(sber.breaker().failure_rate(), 1.0);
    assert!(
        sber.breaker().act(crate::ManualAction::Reset),
        "reset of a closed breaker with outcomes"
    );
    assert_eq!(sber.breaker().snapshot().calls, 0, "the window is emptied");
    assert!(
        !sber.breaker().act(crate::ManualAction::Reset),
        "reset of an empty closed breaker"
    );
    guards.manual("sber", ManualAction::Reset).unwrap();
    assert_eq!(counted(), 0);
    assert!(seen.0.lock().unwrap().is_empty());
    assert_eq!(shown_state(r, "sber"), "closed");

    for (action, state) in [
        (ManualAction::ForceOpen, State::ForcedOpen),
        (ManualAction::Disable, State::Disabled),
        (ManualAction::Reset, State::Closed),
    ] {
        assert!(sber.breaker().act(action), "{action:?} changes the state");
        let before = (counted(), seen.0.lock().unwrap().len());
        assert!(!sber.breaker().act(action), "{action:?} again is a no-op");
        let health = guards.manual("sber", action).unwrap();
        assert_eq!(health.snapshot.state, state);
        assert_eq!(
            (counted(), seen.0.lock().unwrap().len()),
            before,
            "{action:?} again records and notifies nothing"
        );
        assert_eq!(shown_state(r, "sber"), state.as_str());
    }
    assert_eq!(
        *seen.0.lock().unwrap(),
        vec![
            (State::Closed, State::ForcedOpen),
            (State::ForcedOpen, State::Disabled),
            (State::Disabled, State::Closed),
        ]
    );
    assert_eq!(counted(), 3);
}

#[test]
fn duration_buckets_reach_past_every_total_timeout() {
    let defaults = Settings::parse(
        "[systems.a]\n[systems.b]\nread_timeout = 10\ntotal_timeout = 12",
        "inline",
    )
    .unwrap();
    let buckets = super::duration_buckets(&defaults);
    assert_eq!(
        buckets,
        [
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 12.0, 15.0, 30.0, 35.0,
            60.0
        ]
    );
    let long = Settings::parse(
        "[systems.a]\nread_timeout = 100\ncb_slow_threshold = 50\ntotal_timeout = \"2.5m\"",
        "inline",
    )
    .unwrap();
    let buckets = super::duration_buckets(&long);
    assert_eq!(buckets.last(), Some(&300.0));
    assert!(buckets.contains(&150.0));
    assert!(buckets.windows(2).all(|w| w[0] < w[1]), "{buckets:?}");
    let empty = Settings::parse("", "inline").unwrap();
    assert_eq!(super::duration_buckets(&empty), [0.005]);
}

/// A recorder whose `resilience_state` gauges check, at every write, that at least one
/// state of their system is shown; every other series records nothing.
mod invariant {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use metrics::{
        Counter, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    };

    use crate::state::State;

    #[derive(Default)]
    pub(super) struct StateBoard {
        /// Per system, the value of each state's gauge.
        values: Mutex<HashMap<String, [f64; 5]>>,
        pub(super) writes: AtomicUsize,
        pub(super) torn: AtomicUsize,
    }

    struct StateGauge {
        board: Arc<StateBoard>,
        system: String,
        index: usize,
    }

    impl StateGauge {
        fn write(&self, f: impl FnOnce(f64) -> f64) {
            let mut values = self.board.values.lock().unwrap();
            let row = values.entry(self.system.clone()).or_insert([f64::NAN; 5]);
            row[self.index] = f(row[self.index]);
            self.board.writes.fetch_add(1, Ordering::Relaxed);
            // Before every series is written once (registration), nothing to check.
            if row.iter().all(|v| !v.is_nan()) && !row.contains(&1.0) {
                self.board.torn.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    impl GaugeFn for StateGauge {
        fn increment(&self, value: f64) {
            self.write(|v| v + value);
        }

        fn decrement(&self, value: f64) {
            self.write(|v| v - value);
        }

        fn set(&self, value: f64) {
            self.write(|_| value);
        }
    }

    pub(super) struct Checking(pub(super) Arc<StateBoard>);

    impl Recorder for Checking {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

        fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
            Counter::noop()
        }

        fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
            if key.name() != super::super::STATE {
                return Gauge::noop();
            }
            let label = |name: &str| {
                key.labels()
                    .find(|l| l.key() == name)
                    .map(|l| l.value().to_owned())
                    .unwrap_or_default()
            };
            let state = label("state");
            let index = State::ALL
                .iter()
                .position(|s| s.as_str() == state)
                .expect("a known state");
            Gauge::from_arc(Arc::new(StateGauge {
                board: Arc::clone(&self.0),
                system: label("system"),
                index,
            }))
        }

        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            Histogram::noop()
        }
    }
}

#[test]
fn a_scrape_never_sees_no_state_even_under_concurrent_transitions() {
    let board = Arc::new(invariant::StateBoard::default());
    let recorder = invariant::Checking(Arc::clone(&board));
    let settings = Settings::parse(
        "[systems.flappy]\ncb_window_size = 2\ncb_min_calls = 2\ncb_open_duration = \"1ms\"\ncb_half_open_calls = 1",
        "inline",
    )
    .unwrap();
    let guards = metrics::with_local_recorder(&recorder, || {
        Guards::builder(&settings).metrics(true).build()
    });
    let guard = guards.get("flappy").unwrap().clone();
    // Operators and callers on several threads, every kind of transition among them.
    let threads: Vec<_> = (0..4u64)
        .map(|thread| {
            let guard = guard.clone();
            std::thread::spawn(move || {
                let actions = [
                    ManualAction::ForceOpen,
                    ManualAction::Disable,
                    ManualAction::Reset,
                ];
                for i in 0..2_000u64 {
                    let breaker = guard.breaker();
                    if (i + thread) % 3 == 0 {
                        breaker.act(actions[((i / 3 + thread) % 3) as usize]);
                    } else if let Ok(permit) = breaker.try_acquire() {
                        if (i + thread) % 2 == 0 {
                            permit.finish(Verdict::FAILURE);
                        } else {
                            permit.finish(Verdict::SUCCESS);
                        }
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let writes = board.writes.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        writes > 1_000,
        "the transitions moved the gauges: {writes} writes"
    );
    assert_eq!(
        board.torn.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "writes that left no state shown, of {writes}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_bulkhead_gauge_counts_permits_in_use() {
    let (guards, r) = guards_with_recorder();
    let sber = guards.get("sber").unwrap();
    let mut calls_in_flight = Vec::new();
    for _ in 0..4 {
        let guard = sber.clone();
        calls_in_flight.push(tokio::spawn(async move {
            guard
                .call(async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Ok::<_, ()>(())
                })
                .await
        }));
    }
    tokio::task::yield_now().await;
    assert_eq!(gauge(&r, "resilience_bulkhead_in_use", "sber"), Some(4.0));
    // The fifth finds the bulkhead full (bulkhead_wait = 0).
    let err = sber.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(err.cause().as_str(), "bulkhead_full");
    assert_eq!(rejections(&r, "sber", "bulkhead_full"), Some(1));
    assert_eq!(calls(&r, "sber", "rejected"), Some(1));
    for call in calls_in_flight {
        call.await.unwrap().unwrap().unwrap();
    }
    assert_eq!(gauge(&r, "resilience_bulkhead_in_use", "sber"), Some(0.0));
    assert_eq!(calls(&r, "sber", "success"), Some(4));
    // A full bulkhead is not the system's failure.
    assert_eq!(gauge(&r, "resilience_failure_rate", "sber"), Some(0.0));
}

#[test]
fn without_metrics_nothing_is_registered() {
    let recorder = TestRecorder::new();
    let _guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings()).metrics(false).build()
    });
    assert_eq!(recorder.all_series(), Vec::<String>::new());
}

#[test]
fn once_quiet_the_gauges_show_the_breakers_true_state_and_rate() {
    // Many threads recording outcomes of a breaker that opens and closes all the time
    // (one failure of two opens it, for 50 µs, one trial): stale states and rates
    // written by one thread after another's transition must not be what stays.
    let settings = Settings::parse(
        "[systems.flappy]\nread_timeout = 10\ntotal_timeout = 12\ncb_window_size = 2\ncb_min_calls = 1\ncb_failure_rate = 0.5\ncb_open_duration = 0.00005\ncb_half_open_calls = 1\nmax_connections = 100\n",
        "resilience.toml",
    )
    .unwrap();
    let recorder = TestRecorder::new();
    let guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings)
            .observer(Arc::new(SlowObserver))
            .metrics(true)
            .build()
    });
    let guard = guards.get("flappy").unwrap().clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    for round in 0..20u64 {
        runtime.block_on(async {
            let tasks: Vec<_> = (0..4u64)
                .map(|t| {
                    let guard = guard.clone();
                    tokio::spawn(async move {
                        let mut seed = 0x2545_f491_4f6c_dd1d ^ (round * 8 + t + 1);
                        for _ in 0..500 {
                            seed ^= seed << 13;
                            seed ^= seed >> 7;
                            seed ^= seed << 17;
                            let failed = seed % 3 == 0;
                            let _ = guard
                                .call(async move {
                                    if failed {
                                        Err(())
                                    } else {
                                        Ok(())
                                    }
                                })
                                .await;
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        // Operators on four threads, each ending with a reset.
        let operators: Vec<_> = (0..4)
            .map(|_| {
                let guard = guard.clone();
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        guard.breaker().act(crate::ManualAction::ForceOpen);
                        guard.breaker().act(crate::ManualAction::Reset);
                    }
                })
            })
            .collect();
        for operator in operators {
            operator.join().unwrap();
        }
        // Quiet: what the gauges show is the truth.
        let breaker = guard.breaker();
        assert_eq!(
            shown_state(&recorder, "flappy"),
            breaker.state().as_str(),
            "round {round}"
        );
        assert_eq!(
            gauge(&recorder, super::FAILURE_RATE, "flappy"),
            Some(breaker.failure_rate()),
            "round {round}"
        );
    }
}

/// An observer that takes its time over every transition (seen before the metrics).
struct SlowObserver;

impl Observer for SlowObserver {
    fn on_transition(&self, _: &Transition<'_>) {
        std::thread::sleep(Duration::from_micros(50));
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

/// Holds up the delivery of open → half-open until the test lets it go.
struct HoldsHalfOpen {
    entered: std::sync::Mutex<std::sync::mpsc::Sender<()>>,
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Observer for HoldsHalfOpen {
    fn on_transition(&self, t: &Transition<'_>) {
        if t.to == State::HalfOpen {
            self.entered.lock().unwrap().send(()).unwrap();
            let _ = self
                .release
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(10));
        }
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

#[test]
fn a_transition_reported_late_does_not_leave_a_stale_state_gauge() {
    // One thread goes half-open and is slow to report it; meanwhile an operator forces
    // the breaker open and resets it. Quiet afterwards, the gauge must say closed.
    let settings = Settings::parse(
        "[systems.sber]\ncb_window_size = 1\ncb_min_calls = 1\ncb_open_duration = 0.001\n",
        "resilience.toml",
    )
    .unwrap();
    let (entered, entered_rx) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let holder = Arc::new(HoldsHalfOpen {
        entered: std::sync::Mutex::new(entered),
        release: std::sync::Mutex::new(release_rx),
    });
    let recorder = TestRecorder::new();
    let guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings)
            .observer(holder)
            .metrics(true)
            .build()
    });
    let guard = guards.get("sber").unwrap().clone();
    guard
        .breaker()
        .try_acquire()
        .unwrap()
        .finish(Verdict::FAILURE);
    assert_eq!(shown_state(&recorder, "sber"), "open");
    std::thread::sleep(Duration::from_millis(5));
    let trial = {
        let guard = guard.clone();
        std::thread::spawn(move || {
            // Admitted as the trial; reporting open → half-open is held up.
            let permit = guard.breaker().try_acquire().unwrap();
            drop(permit);
        })
    };
    entered_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    guard.breaker().act(crate::ManualAction::ForceOpen);
    guard.breaker().act(crate::ManualAction::Reset);
    release.send(()).unwrap();
    trial.join().unwrap();
    assert_eq!(guard.breaker().state(), State::Closed);
    assert_eq!(shown_state(&recorder, "sber"), "closed");
}

#[tokio::test(start_paused = true)]
async fn the_open_period_and_the_retry_hints_that_lengthened_it_are_shown() {
    let (guards, r) = guards_with_recorder();
    let sber = guards.get("sber").unwrap();
    assert_eq!(
        gauge(&r, "resilience_open_period_seconds", "sber"),
        Some(0.0)
    );
    let hints = || r.counter(r#"resilience_retry_hints_total{system="sber"}"#);
    assert_eq!(hints(), Some(0));
    for i in 0..10 {
        let options = match i {
            9 => CallOptions::new().retry_after(|(): &()| Some(Duration::from_secs(120))),
            _ => CallOptions::new(),
        };
        let _ = sber.call_judged(options, async { Err::<(), ()>(()) }).await;
    }
    assert_eq!(shown_state(&r, "sber"), "open");
    assert_eq!(
        gauge(&r, "resilience_open_period_seconds", "sber"),
        Some(120.0)
    );
    assert_eq!(hints(), Some(1));
    tokio::time::advance(Duration::from_secs(120)).await;
    guards.refresh();
    assert_eq!(shown_state(&r, "sber"), "half_open");
    assert_eq!(
        gauge(&r, "resilience_open_period_seconds", "sber"),
        Some(0.0)
    );
    // A plain failing trial: open again for the plain 30 s, no hint counted.
    let _ = sber.call(async { Err::<(), ()>(()) }).await;
    assert_eq!(
        gauge(&r, "resilience_open_period_seconds", "sber"),
        Some(30.0)
    );
    assert_eq!(hints(), Some(1));
}

/// Observe mode shows in `resilience_observing`, from startup and when it is turned off;
/// its would-be transitions are counted as transitions, its calls as what they were
/// (none rejected).
#[tokio::test(start_paused = true)]
async fn observe_mode_is_shown_and_its_calls_are_counted_as_they_ran() {
    let recorder = TestRecorder::new();
    let text = SETTINGS.replace(
        "[systems.customer]",
        "[systems.customer]\ncb_mode = \"observe\"",
    );
    let settings = Settings::parse(&text, "resilience.toml").unwrap();
    let guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings).metrics(true).build()
    });
    let r = &recorder;
    assert_eq!(gauge(r, "resilience_observing", "customer"), Some(1.0));
    assert_eq!(gauge(r, "resilience_observing", "sber"), Some(0.0));
    let customer = guards.get("customer").unwrap();
    for _ in 0..30 {
        let _ = customer.call(async { Err::<(), _>(()) }).await;
    }
    assert_eq!(customer.breaker().state(), State::Open);
    assert_eq!(transitions(r, "customer", "closed", "open"), Some(1));
    assert_eq!(shown_state(r, "customer"), "open");
    assert_eq!(calls(r, "customer", "failure"), Some(30));
    assert_eq!(calls(r, "customer", "rejected"), Some(0));
    let would_reject = |reason: &str| {
        r.counter(&format!(
            r#"resilience_would_reject_total{{reason="{reason}",system="customer"}}"#
        ))
    };
    // The calls after it opened: run, and counted as what it would have refused.
    let before = would_reject("open").unwrap();
    assert!(before > 0 && before < 30, "{before}");
    let _ = customer.call(async { Ok::<_, ()>(()) }).await;
    let _ = customer.call(async { Err::<(), _>(()) }).await;
    assert_eq!(would_reject("open"), Some(before + 2));
    assert_eq!(would_reject("half_open_full"), Some(0));
    assert_eq!(calls(r, "customer", "rejected"), Some(0));
    guards.manual("customer", ManualAction::Enforce).unwrap();
    assert_eq!(gauge(r, "resilience_observing", "customer"), Some(0.0));
    assert!(customer.call(async { Ok::<_, ()>(()) }).await.is_err());
    assert_eq!(calls(r, "customer", "rejected"), Some(1));
}

#[tokio::test(start_paused = true)]
async fn the_limit_gauge_follows_an_adaptive_bulkhead_and_the_permits_gauge_stays_its_ceiling() {
    let recorder = TestRecorder::new();
    let settings = Settings::parse("[systems.sber]\nbulkhead = \"adaptive\"\n", "test").unwrap();
    let guards = metrics::with_local_recorder(&*recorder, || {
        Guards::builder(&settings).metrics(true).build()
    });
    let r = &recorder;
    let sber = guards.get("sber").unwrap();
    // A replica starts at a quarter of its permits (2), under its 8 permits.
    assert_eq!(gauge(r, "resilience_bulkhead_limit", "sber"), Some(2.0));
    assert_eq!(gauge(r, "resilience_bulkhead_permits", "sber"), Some(8.0));
    // A window of ten successes at a steady 100 ms (the baseline), then one at 400 ms:
    // a jump, the limit cut to 2 / 4, rounded up.
    for millis in [100; 10].into_iter().chain([400]) {
        sber.call(async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            Ok::<_, ()>(())
        })
        .await
        .unwrap()
        .unwrap();
    }
    assert_eq!(sber.bulkhead_limit(), 1);
    assert_eq!(gauge(r, "resilience_bulkhead_limit", "sber"), Some(1.0));
    assert_eq!(gauge(r, "resilience_bulkhead_permits", "sber"), Some(8.0));
}
