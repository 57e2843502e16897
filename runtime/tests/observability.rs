//! What an operator sees: the transition log lines and call spans a subscriber records,
//! the health snapshot behind `/health/ready`, and manual control by system name.
//! Everything on tokio's paused clock.

use std::time::Duration;

mod common;

use outbound_guard::{
    Guard, Guards, HealthStatus, ManualAction, ReadinessPolicy, Reason, Settings, State, Transition,
};

/// `sber` is critical (30%), with the guide's other numbers and a short slow threshold;
/// `customer` takes every default.
const SETTINGS: &str = r"
[systems.sber]
read_timeout = 10.0
total_timeout = 12.0
cb_slow_threshold = 5.0
cb_failure_rate = 0.30
max_connections = 10

[systems.customer]
";

/// Every test starts here, so the one global subscriber is in place before any
/// callsite of this binary registers (see `logs::init`).
fn settings() -> Settings {
    #[cfg(feature = "tracing")]
    logs::init();
    Settings::parse(SETTINGS, "resilience.toml").unwrap()
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

/// 7 successes, then 3 failures: 3 of the first 10 at 30% opens.
async fn open(guard: &Guard) {
    for _ in 0..7 {
        ok(guard).await;
    }
    for _ in 0..3 {
        fail(guard).await;
    }
    assert_eq!(guard.breaker().state(), State::Open);
}

fn transition(reason: Reason, from: State, to: State) -> String {
    Transition {
        system: "sber",
        from,
        to,
        reason,
        at: tokio::time::Instant::now(),
        open: None,
        observing: false,
    }
    .to_string()
}

#[test]
fn every_reason_reads_as_a_sentence() {
    use outbound_guard::ManualAction::*;
    use State::*;
    let cases = [
        (
            Reason::FailureRate {
                failures: 16,
                calls: 50,
                threshold: 0.30,
            },
            Closed,
            Open,
            "sber opened: 16 of 50 calls failed (32% ≥ 30%)",
        ),
        (
            Reason::FailureRate {
                failures: 1,
                calls: 3,
                threshold: 1.0 / 3.0,
            },
            Closed,
            Open,
            "sber opened: 1 of 3 calls failed (33.3% ≥ 33.3%)",
        ),
        (
            Reason::OpenElapsed {
                after: Duration::from_secs(30),
            },
            Open,
            HalfOpen,
            "sber half-open after 30s",
        ),
        (
            Reason::OpenElapsed {
                after: Duration::from_millis(95_400),
            },
            Open,
            HalfOpen,
            "sber half-open after 1m 35s",
        ),
        (
            Reason::TrialsSucceeded { trials: 3 },
            HalfOpen,
            Closed,
            "sber closed: 3/3 trials succeeded",
        ),
        (
            Reason::TrialFailed {
                succeeded: 1,
                trials: 3,
            },
            HalfOpen,
            Open,
            "sber opened again: trial 2 of 3 failed",
        ),
        (
            Reason::Manual(ForceOpen),
            Closed,
            ForcedOpen,
            "sber forced open by an operator",
        ),
        (
            Reason::Manual(Disable),
            ForcedOpen,
            Disabled,
            "sber disabled (forced closed) by an operator: every call goes through, nothing is counted",
        ),
        (
            Reason::Manual(Reset),
            Disabled,
            Closed,
            "sber reset to closed by an operator",
        ),
    ];
    for (reason, from, to, expected) in cases {
        assert_eq!(transition(reason, from, to), expected);
    }
}

#[cfg(feature = "tracing")]
mod logs {
    use std::cell::RefCell;
    use std::collections::{BTreeMap, HashMap};
    use std::fmt;
    use std::sync::{Arc, Mutex, OnceLock};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Interest;
    use tracing::{Event, Level, Metadata, Subscriber};

    use super::*;

    thread_local! {
        /// The capture installed on this test's thread (the runtimes are current-thread).
        static CURRENT: RefCell<Option<Capture>> = const { RefCell::new(None) };
    }

    /// Installs, once, a global subscriber that hands everything to the capture of the
    /// calling thread. Scoped (`set_default`) subscribers in parallel tests race with
    /// tracing's per-callsite interest cache: a callsite first hit by a test without a
    /// subscriber can be cached as never-enabled just as another test installs one, and
    /// that test then misses its events. One global subscriber that answers
    /// `Interest::sometimes()` everywhere, installed before any callsite registers, has
    /// no such race.
    pub fn init() {
        static ROUTER: OnceLock<()> = OnceLock::new();
        ROUTER.get_or_init(|| {
            tracing::subscriber::set_global_default(Router)
                .expect("no other global subscriber in this test binary");
        });
    }

    fn with_current<R>(f: impl FnOnce(&Capture) -> R) -> Option<R> {
        CURRENT.with(|current| current.borrow().as_ref().map(f))
    }

    struct Router;

    impl Subscriber for Router {
        fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
            Interest::sometimes()
        }

        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            with_current(|c| c.enabled(metadata)).unwrap_or(false)
        }

        fn new_span(&self, attrs: &Attributes<'_>) -> Id {
            with_current(|c| c.new_span(attrs)).unwrap_or_else(|| Id::from_u64(u64::MAX))
        }

        fn record(&self, span: &Id, values: &Record<'_>) {
            with_current(|c| c.record(span, values));
        }

        fn record_follows_from(&self, _: &Id, _: &Id) {}

        fn event(&self, event: &Event<'_>) {
            with_current(|c| c.event(event));
        }

        fn enter(&self, span: &Id) {
            with_current(|c| c.enter(span));
        }

        fn exit(&self, span: &Id) {
            with_current(|c| c.exit(span));
        }

        fn clone_span(&self, span: &Id) -> Id {
            with_current(|c| c.clone_span(span)).unwrap_or_else(|| span.clone())
        }

        fn try_close(&self, span: Id) -> bool {
            with_current(|c| c.try_close(span)).unwrap_or(false)
        }
    }

    /// Uninstalls the capture from this thread when dropped.
    pub struct Installed;

    impl Drop for Installed {
        fn drop(&mut self) {
            CURRENT.with(|current| current.borrow_mut().take());
        }
    }

    /// One event as recorded: level, target, message, fields, and the spans it was in
    /// (outermost first), each with its fields at the time.
    #[derive(Debug, Clone)]
    pub struct Logged {
        pub level: Level,
        pub target: String,
        pub message: String,
        pub fields: BTreeMap<String, String>,
        pub spans: Vec<(String, BTreeMap<String, String>)>,
    }

    #[derive(Debug, Clone)]
    pub struct SpanRecord {
        pub name: String,
        pub level: Level,
        pub target: String,
        pub fields: BTreeMap<String, String>,
        refs: usize,
    }

    #[derive(Debug, Default)]
    struct Recorded {
        next: u64,
        live: HashMap<u64, SpanRecord>,
        closed: Vec<SpanRecord>,
        stack: Vec<u64>,
        events: Vec<Logged>,
    }

    /// A subscriber that records everything, or only what `wants` lets through.
    #[derive(Clone)]
    pub struct Capture {
        recorded: Arc<Mutex<Recorded>>,
        wants: fn(&Metadata<'_>) -> bool,
    }

    struct Fields<'a>(&'a mut BTreeMap<String, String>);

    impl Visit for Fields<'_> {
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().to_owned(), value.to_owned());
        }

        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            self.0.insert(field.name().to_owned(), format!("{value:?}"));
        }
    }

    impl Capture {
        pub fn new() -> Self {
            Self::wanting(|_| true)
        }

        pub fn wanting(wants: fn(&Metadata<'_>) -> bool) -> Self {
            Capture {
                recorded: Arc::default(),
                wants,
            }
        }

        /// Installs it on this thread (the tests' runtime is current-thread).
        pub fn install(&self) -> Installed {
            init();
            CURRENT.with(|current| *current.borrow_mut() = Some(self.clone()));
            Installed
        }

        pub fn events(&self) -> Vec<Logged> {
            self.recorded.lock().unwrap().events.clone()
        }

        /// The events of target `outbound_guard` at INFO or above, as `LEVEL message`.
        pub fn lines(&self) -> Vec<String> {
            self.events()
                .into_iter()
                .filter(|e| e.target == "outbound_guard" && e.level <= Level::INFO)
                .map(|e| format!("{} {}", e.level, e.message))
                .collect()
        }

        pub fn closed_spans(&self) -> Vec<SpanRecord> {
            self.recorded.lock().unwrap().closed.clone()
        }

        pub fn spans_created(&self) -> u64 {
            self.recorded.lock().unwrap().next
        }
    }

    impl Subscriber for Capture {
        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            (self.wants)(metadata)
        }

        fn new_span(&self, attrs: &Attributes<'_>) -> Id {
            let mut fields = BTreeMap::new();
            attrs.record(&mut Fields(&mut fields));
            let meta = attrs.metadata();
            let mut r = self.recorded.lock().unwrap();
            r.next += 1;
            let id = r.next;
            r.live.insert(
                id,
                SpanRecord {
                    name: meta.name().to_owned(),
                    level: *meta.level(),
                    target: meta.target().to_owned(),
                    fields,
                    refs: 1,
                },
            );
            Id::from_u64(id)
        }

        fn record(&self, span: &Id, values: &Record<'_>) {
            let mut r = self.recorded.lock().unwrap();
            if let Some(span) = r.live.get_mut(&span.into_u64()) {
                values.record(&mut Fields(&mut span.fields));
            }
        }

        fn record_follows_from(&self, _: &Id, _: &Id) {}

        fn event(&self, event: &Event<'_>) {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            let message = fields.remove("message").unwrap_or_default();
            let mut r = self.recorded.lock().unwrap();
            let spans = r
                .stack
                .iter()
                .filter_map(|id| r.live.get(id))
                .map(|s| (s.name.clone(), s.fields.clone()))
                .collect();
            let meta = event.metadata();
            r.events.push(Logged {
                level: *meta.level(),
                target: meta.target().to_owned(),
                message,
                fields,
                spans,
            });
        }

        fn enter(&self, span: &Id) {
            self.recorded.lock().unwrap().stack.push(span.into_u64());
        }

        fn exit(&self, span: &Id) {
            let mut r = self.recorded.lock().unwrap();
            if let Some(at) = r.stack.iter().rposition(|id| *id == span.into_u64()) {
                r.stack.remove(at);
            }
        }

        fn clone_span(&self, span: &Id) -> Id {
            let mut r = self.recorded.lock().unwrap();
            if let Some(s) = r.live.get_mut(&span.into_u64()) {
                s.refs += 1;
            }
            span.clone()
        }

        fn try_close(&self, span: Id) -> bool {
            let mut r = self.recorded.lock().unwrap();
            let id = span.into_u64();
            let Some(s) = r.live.get_mut(&id) else {
                return false;
            };
            s.refs -= 1;
            if s.refs > 0 {
                return false;
            }
            let s = r.live.remove(&id).unwrap();
            r.closed.push(s);
            true
        }
    }

    fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_breakers_whole_life_is_logged_in_words_at_the_right_levels() {
        let capture = Capture::new();
        let _installed = capture.install();
        let guards = Guards::new(&settings());
        let sber = guards.get("sber").unwrap();

        open(&sber).await;
        tokio::time::advance(Duration::from_secs(30)).await;
        for _ in 0..3 {
            ok(&sber).await;
        }
        assert_eq!(sber.breaker().state(), State::Closed);

        // Open again, then the second trial fails.
        open(&sber).await;
        tokio::time::advance(Duration::from_secs(45)).await;
        ok(&sber).await;
        fail(&sber).await;
        assert_eq!(sber.breaker().state(), State::Open);

        guards.manual("sber", ManualAction::ForceOpen).unwrap();
        guards.manual("sber", ManualAction::Disable).unwrap();
        guards.manual("sber", ManualAction::Reset).unwrap();

        assert_eq!(
            capture.lines(),
            [
                // Once, at startup: which file is in effect.
                "INFO outbound-guard settings from resilience.toml: customer, sber",
                "WARN sber opened: 3 of 10 calls failed (30% ≥ 30%)",
                "INFO sber half-open after 30s",
                "INFO sber closed: 3/3 trials succeeded",
                "WARN sber opened: 3 of 10 calls failed (30% ≥ 30%)",
                "INFO sber half-open after 45s",
                "WARN sber opened again: trial 2 of 3 failed",
                "WARN sber forced open by an operator",
                "WARN sber disabled (forced closed) by an operator: every call goes through, nothing is counted",
                "INFO sber reset to closed by an operator",
            ]
        );

        // The structured fields, for filtering and dashboards.
        let transitions: Vec<_> = capture
            .events()
            .into_iter()
            .filter(|e| e.fields.contains_key("from"))
            .map(|e| e.fields)
            .collect();
        assert_eq!(
            transitions[0],
            fields(&[
                ("system", "sber"),
                ("from", "closed"),
                ("to", "open"),
                ("reason", "failure_rate")
            ])
        );
        assert_eq!(
            transitions[1],
            fields(&[
                ("system", "sber"),
                ("from", "open"),
                ("to", "half_open"),
                ("reason", "open_elapsed")
            ])
        );
        assert_eq!(
            transitions[2],
            fields(&[
                ("system", "sber"),
                ("from", "half_open"),
                ("to", "closed"),
                ("reason", "trials_succeeded")
            ])
        );
        assert_eq!(
            transitions[5],
            fields(&[
                ("system", "sber"),
                ("from", "half_open"),
                ("to", "open"),
                ("reason", "trial_failed")
            ])
        );
        assert_eq!(
            transitions[6],
            fields(&[
                ("system", "sber"),
                ("from", "open"),
                ("to", "forced_open"),
                ("reason", "manual"),
                ("action", "force_open")
            ])
        );
        assert_eq!(
            transitions[7],
            fields(&[
                ("system", "sber"),
                ("from", "forced_open"),
                ("to", "disabled"),
                ("reason", "manual"),
                ("action", "disable")
            ])
        );
        assert_eq!(
            transitions[8],
            fields(&[
                ("system", "sber"),
                ("from", "disabled"),
                ("to", "closed"),
                ("reason", "manual"),
                ("action", "reset")
            ])
        );
        assert_eq!(transitions.len(), 9);
    }

    #[tokio::test(start_paused = true)]
    async fn a_breaker_built_alone_logs_with_the_observer_passed_in() {
        let capture = Capture::new();
        let _installed = capture.install();
        let settings = settings();
        let guard = Guard::builder(settings.system("sber").unwrap())
            .observer(std::sync::Arc::new(outbound_guard::TracingObserver))
            .build();
        guard.breaker().act(outbound_guard::ManualAction::ForceOpen);
        assert_eq!(capture.lines(), ["WARN sber forced open by an operator"]);

        // And without it, nothing.
        let quiet = Guards::builder(&settings).tracing(false).build();
        quiet.manual("sber", ManualAction::ForceOpen).unwrap();
        assert_eq!(capture.lines().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn each_call_runs_in_a_span_with_its_system_and_outcome() {
        let capture = Capture::new();
        let _installed = capture.install();
        let guards = Guards::new(&settings());
        let sber = guards.get("sber").unwrap();
        let customer = guards.get("customer").unwrap();

        // What the adapter logs inside the call carries the call's span.
        sber.call(async {
            tracing::info!(target: "adapter", "POST /payments");
            Ok::<_, ()>(())
        })
        .await
        .unwrap()
        .unwrap();
        fail(&customer).await;
        let slow = sber
            .call(async {
                tokio::time::sleep(Duration::from_secs(6)).await;
                Ok::<_, ()>(())
            })
            .await;
        assert_eq!(slow, Ok(Ok(())));
        let timed_out = sber.call(std::future::pending::<Result<(), ()>>()).await;
        assert!(timed_out.is_err());
        let cancelled = tokio::time::timeout(
            Duration::from_secs(1),
            sber.call(std::future::pending::<Result<(), ()>>()),
        )
        .await;
        assert!(cancelled.is_err());

        let adapter: Vec<_> = capture
            .events()
            .into_iter()
            .filter(|e| e.target == "adapter")
            .collect();
        assert_eq!(adapter.len(), 1);
        assert_eq!(adapter[0].message, "POST /payments");
        assert_eq!(
            adapter[0].spans,
            [("guarded_call".to_owned(), fields(&[("system", "sber")]))]
        );

        let spans: Vec<_> = capture
            .closed_spans()
            .into_iter()
            .map(|s| {
                assert_eq!(
                    (s.level, s.target.as_str()),
                    (Level::INFO, "outbound_guard")
                );
                (
                    s.name,
                    s.fields["system"].clone(),
                    s.fields["outcome"].clone(),
                )
            })
            .collect();
        let expected = [
            ("guarded_call", "sber", "success"),
            ("guarded_call", "customer", "failure"),
            ("guarded_call", "sber", "slow"),
            ("guarded_call", "sber", "timeout"),
            ("guarded_call", "sber", "cancelled"),
        ]
        .map(|(n, s, o)| (n.to_owned(), s.to_owned(), o.to_owned()));
        assert_eq!(spans, expected);
    }

    #[tokio::test(start_paused = true)]
    async fn a_rejected_call_has_no_span_and_a_debug_event_saying_why() {
        let capture = Capture::new();
        let _installed = capture.install();
        let guards = Guards::new(&settings());
        let sber = guards.get("sber").unwrap();
        open(&sber).await;
        let spans_before = capture.closed_spans().len();
        tokio::time::advance(Duration::from_secs(12)).await;
        assert!(sber.call(async { Ok::<_, ()>(()) }).await.is_err());
        assert_eq!(capture.closed_spans().len(), spans_before);
        let last = capture.events().pop().unwrap();
        assert_eq!(last.level, Level::DEBUG);
        assert_eq!(
            last.message,
            "sber call rejected: circuit open, trial calls in 18.0s"
        );
        assert_eq!(
            last.fields,
            fields(&[
                ("system", "sber"),
                ("outcome", "rejected"),
                ("reason", "open")
            ])
        );
    }

    /// A reset of a closed breaker with outcomes in its window is logged as a reset with
    /// the figures it forgot, and is no transition: no `from`/`to` line. A reset of the
    /// empty closed breaker then logs nothing at all.
    #[tokio::test(start_paused = true)]
    async fn a_reset_of_a_closed_breaker_logs_what_it_forgot_and_no_transition() {
        let capture = Capture::new();
        let _installed = capture.install();
        let guards = Guards::new(&settings());
        let customer = guards.get("customer").unwrap();
        for _ in 0..6 {
            ok(&customer).await;
        }
        for _ in 0..4 {
            fail(&customer).await;
        }
        assert_eq!(customer.breaker().state(), State::Closed);
        guards.manual("customer", ManualAction::Reset).unwrap();
        guards.manual("customer", ManualAction::Reset).unwrap();
        let lines: Vec<_> = capture
            .lines()
            .into_iter()
            .filter(|line| line.contains("customer") && !line.contains("settings from"))
            .collect();
        assert_eq!(
            lines,
            ["INFO customer reset by an operator: window cleared, 4 of 10 had failed"]
        );
        assert!(capture
            .events()
            .iter()
            .all(|e| !e.fields.contains_key("from")));
        assert_eq!(customer.breaker().snapshot().calls, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_subscriber_that_does_not_want_the_span_gets_none() {
        let capture = Capture::wanting(|meta| {
            meta.target() != "outbound_guard" || meta.level() <= &Level::WARN
        });
        let _installed = capture.install();
        let guards = Guards::new(&settings());
        let sber = guards.get("sber").unwrap();
        open(&sber).await;
        assert_eq!(capture.spans_created(), 0);
        // The WARN transition still gets through.
        assert_eq!(
            capture.lines(),
            ["WARN sber opened: 3 of 10 calls failed (30% ≥ 30%)"]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_degrades_readiness_without_failing_it_by_default() {
    let guards = Guards::new(&settings());
    let health = guards.health();
    assert_eq!(
        (health.status, health.ready, health.http_status()),
        (HealthStatus::Up, true, 200)
    );
    assert_eq!(health.policy, ReadinessPolicy::DegradeOnOpen);
    assert_eq!(
        health
            .systems
            .iter()
            .map(|s| &*s.snapshot.system)
            .collect::<Vec<_>>(),
        ["customer", "sber"]
    );

    let sber = guards.get("sber").unwrap();
    ok(&sber).await;
    fail(&sber).await;
    let h = guards.health();
    let s = h.system("sber").unwrap();
    assert_eq!(
        (
            s.snapshot.state,
            s.status,
            s.snapshot.failures,
            s.snapshot.calls
        ),
        (State::Closed, HealthStatus::Up, 1, 2)
    );
    assert_eq!(s.snapshot.failure_rate, 0.5);
    assert_eq!(s.failure_rate_threshold, 0.30);
    assert_eq!(s.snapshot.retry_after, None);
    assert_eq!((s.in_flight, s.bulkhead_permits), (0, 8));

    for _ in 0..6 {
        ok(&sber).await;
    }
    fail(&sber).await;
    fail(&sber).await; // 3 of 10: open
    tokio::time::advance(Duration::from_secs(10)).await;
    let h = guards.health();
    assert_eq!(
        (h.status, h.ready, h.http_status()),
        (HealthStatus::Degraded, true, 200)
    );
    let s = h.system("sber").unwrap();
    assert_eq!(
        (s.snapshot.state, s.status),
        (State::Open, HealthStatus::Down)
    );
    assert_eq!(s.in_state_for, Duration::from_secs(10));
    assert_eq!(s.snapshot.retry_after, Some(Duration::from_secs(20)));
    assert_eq!(
        s.snapshot.since + Duration::from_secs(10),
        tokio::time::Instant::now()
    );
    assert_eq!(h.system("customer").unwrap().status, HealthStatus::Up);

    // Half-open is degraded too.
    tokio::time::advance(Duration::from_secs(20)).await;
    let trial = common::hold(&sber).await.unwrap();
    let h = guards.health();
    assert_eq!(h.system("sber").unwrap().status, HealthStatus::Degraded);
    assert_eq!(h.system("sber").unwrap().in_flight, 1);
    assert_eq!((h.status, h.ready), (HealthStatus::Degraded, true));
    drop(trial);
}

#[tokio::test(start_paused = true)]
async fn under_fail_on_open_an_open_breaker_fails_readiness() {
    let guards = Guards::builder(&settings())
        .readiness(ReadinessPolicy::FailOnOpen)
        .build();
    assert_eq!(guards.readiness(), ReadinessPolicy::FailOnOpen);
    assert!(guards.health().ready);
    let sber = guards.get("sber").unwrap();
    open(&sber).await;
    let h = guards.health();
    assert_eq!(
        (h.status, h.ready, h.http_status()),
        (HealthStatus::Down, false, 503)
    );

    // Disabled is degraded, never down: the operator chose to let calls through.
    guards.manual("sber", ManualAction::Disable).unwrap();
    let h = guards.health();
    assert_eq!((h.status, h.ready), (HealthStatus::Degraded, true));
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert!(!guards.health().ready);
}

#[cfg(feature = "serde")]
#[tokio::test(start_paused = true)]
async fn the_health_json_says_what_the_snapshot_says() {
    let guards = Guards::new(&settings());
    let sber = guards.get("sber").unwrap();
    open(&sber).await;
    tokio::time::advance(Duration::from_millis(12_500)).await;
    let health = guards.health();
    let json = serde_json::to_value(&health).expect("serializable");
    assert_eq!(json["status"], "degraded");
    assert_eq!(json["ready"], true);
    assert_eq!(json["policy"], "degrade_on_open");
    let s = &json["systems"]["sber"];
    assert_eq!(s["status"], "down");
    assert_eq!(s["state"], "open");
    // While open: the figures that tripped it, and why.
    assert_eq!(s["failures"], 3);
    assert_eq!(s["calls"], 10);
    assert_eq!(s["failure_rate"], 0.3);
    assert_eq!(s["opened_by"], "failure_rate");
    assert_eq!(
        s["set_by"],
        serde_json::Value::Null,
        "opened by the breaker itself"
    );
    assert_eq!(s["slow_in_flight"], 0);
    assert_eq!(s["failure_rate_threshold"], 0.3);
    assert_eq!(s["for_seconds"], 12.5);
    assert_eq!(s["retry_after_seconds"], 17.5);
    assert_eq!(s["open_for_seconds"], 30.0);
    assert_eq!(s["retry_hint_seconds"], serde_json::Value::Null);
    assert_eq!(s["in_flight"], 0);
    assert_eq!(s["bulkhead_permits"], 8);
    assert_eq!(
        s["bulkhead_limit"], 8,
        "a fixed bulkhead's limit is its permits"
    );
    let since = s["since"].as_str().unwrap();
    assert_eq!(since.len(), "2026-05-01T03:12:09.512Z".len(), "{since}");
    assert!(
        since.ends_with('Z') && since.as_bytes()[10] == b'T',
        "{since}"
    );
    let c = &json["systems"]["customer"];
    assert_eq!(c["status"], "up");
    assert_eq!(c["state"], "closed");
    assert_eq!(c["retry_after_seconds"], serde_json::Value::Null);
    assert_eq!(c["opened_by"], serde_json::Value::Null);
    assert_eq!(c["failure_rate_threshold"], 0.5);
    assert_eq!(json["systems"].as_object().unwrap().len(), 2);
    // Every field, in the documented order, and nothing else.
    let text = serde_json::to_string(health.system("sber").unwrap()).unwrap();
    let keys: Vec<&str> = text
        .trim_matches(['{', '}'])
        .split(',')
        .map(|field| field.split(':').next().unwrap().trim_matches('"'))
        .collect();
    assert_eq!(
        keys,
        [
            "status",
            "state",
            "failures",
            "calls",
            "failure_rate",
            "opened_by",
            "set_by",
            "failure_rate_threshold",
            "since",
            "for_seconds",
            "retry_after_seconds",
            "open_for_seconds",
            "retry_hint_seconds",
            "in_flight",
            "slow_in_flight",
            "bulkhead_permits",
            "bulkhead_limit",
            "observing",
            "would_have_refused"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn operators_act_by_system_name() {
    let guards = Guards::new(&settings());
    let sber = guards.get("sber").unwrap();

    let after = guards
        .manual("sber", "force_open".parse().unwrap())
        .unwrap();
    assert_eq!(
        (after.snapshot.state, after.status),
        (State::ForcedOpen, HealthStatus::Down)
    );
    assert_eq!(after.snapshot.set_by, Some(outbound_guard::SetBy::Operator));
    let err = sber.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(err.to_string(), "sber: circuit forced open by an operator");
    // The other system is untouched.
    ok(&guards.get("customer").unwrap()).await;

    let after = guards.manual("sber", "disable".parse().unwrap()).unwrap();
    assert_eq!(after.snapshot.state, State::Disabled);
    for _ in 0..20 {
        fail(&sber).await; // admitted, and nothing counted
    }
    assert_eq!(sber.breaker().snapshot().calls, 0);

    let after = guards.manual("sber", ManualAction::Reset).unwrap();
    assert_eq!(
        (after.snapshot.state, after.snapshot.calls),
        (State::Closed, 0)
    );
    ok(&sber).await;

    let err = guards.manual("sbr", ManualAction::Reset).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no system `sbr` in resilience.toml; did you mean `sber`? known systems: `customer`, `sber`"
    );
    assert!("close".parse::<ManualAction>().is_err());
    // "closed" would read as "back to normal" (that is `reset`); forcing closed is
    // `disable`, named as such.
    for ambiguous in ["closed", "open"] {
        assert!(ambiguous.parse::<ManualAction>().is_err(), "{ambiguous}");
    }
    assert_eq!(
        "force_closed".parse::<ManualAction>(),
        Ok(ManualAction::Disable)
    );
}

/// The `read_timeout` of every settings an observer is told of.
#[derive(Default)]
struct SettingsHeard(std::sync::Mutex<Vec<Duration>>);

impl outbound_guard::Observer for SettingsHeard {
    fn on_settings(&self, settings: &outbound_guard::SystemSettings) {
        self.0.lock().unwrap().push(settings.read_timeout());
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

/// Observers hear the settings a guard's calls run under: when it is built, and again
/// at each reload (the recorder writes them as its limits line).
#[test]
fn observers_hear_the_settings_at_the_start_and_at_each_reload() {
    let file = |read: u32| {
        outbound_guard::Settings::parse(
            &format!("[systems.sber]\nread_timeout = {read}\ntotal_timeout = 40\n"),
            "inline",
        )
        .unwrap()
    };
    let heard = std::sync::Arc::new(SettingsHeard::default());
    let guards = outbound_guard::Guards::builder(&file(10))
        .observer(heard.clone())
        .build();
    assert_eq!(*heard.0.lock().unwrap(), [Duration::from_secs(10)]);
    guards.reload(&file(20)).unwrap();
    assert_eq!(
        *heard.0.lock().unwrap(),
        [Duration::from_secs(10), Duration::from_secs(20)]
    );
}

/// A breaker's `Debug` says whose it is, its state and whether it only observes.
#[test]
fn a_breakers_debug_names_its_system_state_and_mode() {
    let breaker = outbound_guard::Breaker::new(&common::system(""));
    assert_eq!(
        format!("{breaker:?}"),
        r#"Breaker { name: "sber", state: Closed, observing: false, .. }"#
    );
    breaker.act(outbound_guard::ManualAction::Observe);
    assert!(format!("{breaker:?}").contains("observing: true"));
}
