//! A health snapshot of every system, for a readiness endpoint.
//!
//! By default an open breaker **degrades** readiness without failing it: failing it would
//! pull every replica out of the load balancer while the payment provider is down, and
//! the service could no longer even answer "payment unavailable, try later".
//! [`ReadinessPolicy::FailOnOpen`] makes an open breaker fail readiness instead.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::breaker::Snapshot;
use crate::guard::Guard;
use crate::state::State;

/// How an open breaker counts towards the service's readiness. Serialized as
/// `degrade_on_open` or `fail_on_open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ReadinessPolicy {
    /// An open (or forced open) breaker makes the service `degraded`, still ready: the
    /// service keeps answering, with its fallback or a clear 503 of its own.
    #[default]
    DegradeOnOpen,
    /// An open (or forced open) breaker makes the service `down`, not ready.
    FailOnOpen,
}

/// A verdict: of one system, or of the whole service. Serialized as its
/// [`as_str`](Self::as_str).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum HealthStatus {
    /// Closed: calls flow.
    Up,
    /// Half-open (trial calls under way) or disabled by an operator; for the whole
    /// service: some system is not up, but the service stays ready.
    Degraded,
    /// Open or forced open: calls are refused. For the whole service: not ready (only
    /// under [`ReadinessPolicy::FailOnOpen`]).
    Down,
}

impl HealthStatus {
    /// `up`, `degraded` or `down`.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Up => "up",
            HealthStatus::Degraded => "degraded",
            HealthStatus::Down => "down",
        }
    }

    /// A breaker in observe mode refuses nothing: open or half-open, it is `degraded`
    /// (the upstream is failing), never `down`.
    fn of(state: State, observing: bool) -> HealthStatus {
        match state {
            State::Open | State::HalfOpen if observing => HealthStatus::Degraded,
            State::Closed => HealthStatus::Up,
            State::HalfOpen | State::Disabled => HealthStatus::Degraded,
            State::Open | State::ForcedOpen => HealthStatus::Down,
        }
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One system's breaker and bulkhead, read at one moment: the breaker's [`Snapshot`] and
/// what the guard adds to it.
///
/// Serialized (feature `serde`) flat, without the system's name, which keys it in
/// [`Health`]'s `systems`; see [`Health`] for the fields' JSON names.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SystemHealth {
    /// The breaker's reading: the system, its state, the window's figures (slow calls
    /// and timeouts count as failures), when it entered the state, and while open the
    /// time left and why it opened.
    pub snapshot: Snapshot,
    /// `up` (closed), `degraded` (half-open, disabled) or `down` (open, forced open);
    /// in observe mode, `degraded` while it would be open or half-open, as it refuses
    /// nothing.
    pub status: HealthStatus,
    /// The configured `cb_failure_rate` threshold.
    pub failure_rate_threshold: f64,
    /// When it entered this state, by the wall clock: what a person reading the
    /// health answer can compare with their own clock.
    pub entered_at: SystemTime,
    /// How long it has been in this state.
    pub in_state_for: Duration,
    /// Bulkhead permits taken right now.
    pub in_flight: usize,
    /// Of those, permits held by calls already past `cb_slow_threshold`: all of them
    /// means the system hangs (and waiters turned away count against the breaker).
    pub slow_in_flight: usize,
    /// The bulkhead's size: an adaptive bulkhead's ceiling.
    pub bulkhead_permits: usize,
    /// The bulkhead's limit now: `bulkhead_permits` when fixed; when adaptive, the
    /// limit its latency gives ([`Guard::bulkhead_limit`]).
    pub bulkhead_limit: usize,
}

impl Guard {
    /// The system's breaker and bulkhead, read now: for a health endpoint. Like
    /// [`Breaker::snapshot`](crate::Breaker::snapshot), it performs a due open →
    /// half-open transition first.
    pub fn health(&self) -> SystemHealth {
        let breaker = self.breaker();
        let snapshot = breaker.snapshot();
        let in_state_for = Instant::now().saturating_duration_since(snapshot.since);
        SystemHealth {
            status: HealthStatus::of(snapshot.state, snapshot.observing),
            failure_rate_threshold: breaker.failure_rate_threshold(),
            entered_at: SystemTime::now()
                .checked_sub(in_state_for)
                .unwrap_or(UNIX_EPOCH),
            in_state_for,
            in_flight: self.in_flight(),
            slow_in_flight: self.slow_in_flight(),
            bulkhead_permits: self.bulkhead_permits(),
            bulkhead_limit: self.bulkhead_limit(),
            snapshot,
        }
    }
}

/// Every system's health and the service's readiness verdict; [`Health::http_status`]
/// is the status code of a `/health/ready` answer.
///
/// With the `serde` feature, it serializes to the body of a `/health/ready` answer:
///
/// ```json
/// {"status":"degraded","ready":true,"policy":"degrade_on_open","systems":{
///   "sber":{"status":"down","state":"open","failures":3,"calls":10,"failure_rate":0.3,
///           "opened_by":"failure_rate","set_by":null,"failure_rate_threshold":0.3,
///           "since":"2026-05-01T03:12:09.512Z","for_seconds":12.5,"retry_after_seconds":17.5,
///           "open_for_seconds":30.0,"retry_hint_seconds":null,
///           "in_flight":0,"slow_in_flight":0,"bulkhead_permits":8,"bulkhead_limit":8,
///           "observing":false,"would_have_refused":0}}}
/// ```
///
/// `since` is the wall-clock time (UTC, RFC 3339, to the millisecond) the state was
/// entered; rates and seconds are rounded to the millisecond; `retry_after_seconds` is
/// `null` unless open. While open, `open_for_seconds` is the whole open period
/// (`cb_open_duration`, backed off or with jitter, or as the upstream's hint asked) and
/// `retry_hint_seconds` the upstream's retry hint (`Retry-After`,
/// `grpc-retry-pushback-ms`, capped by `cb_open_max`) when it made the period longer;
/// both `null` otherwise. The window restarts with every state; while open, `failures`,
/// `calls` and `failure_rate` are the figures that tripped it and `opened_by` the reason
/// (`null` in other states). While forced open or disabled, `set_by` says who did it:
/// `file` (the settings file's `cb_mode`) or `operator` (the API); `null` otherwise. A breaker whose open duration has passed reads
/// `half_open`, never `open` with nothing left. `observing` is `true` in observe mode
/// (`cb_mode = "observe"`): the state is the one the breaker would be in, it refuses
/// nothing (its status is then `degraded`, never `down`), and `would_have_refused`
/// counts the calls it let through that it would have refused. `bulkhead_limit` is
/// the bulkhead's limit now: `bulkhead_permits` for a fixed bulkhead, the limit its
/// latency gives for an adaptive one.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{Guards, Settings, HealthStatus};
///
/// let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
/// let guards = Guards::new(&settings);
/// guards.get("sber").unwrap().breaker().act(outbound_guard::ManualAction::ForceOpen);
///
/// let health = guards.health();
/// assert_eq!(health.status, HealthStatus::Degraded); // an open breaker degrades...
/// assert!(health.ready); // ...but does not fail readiness by default
/// assert_eq!(health.http_status(), 200);
/// assert_eq!(health.system("sber").unwrap().status, HealthStatus::Down);
/// # #[cfg(feature = "serde")]
/// assert!(serde_json::to_string(&health).unwrap().starts_with(r#"{"status":"degraded","ready":true,"policy":"degrade_on_open","systems":{"customer":{"status":"up","state":"closed","#));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Health {
    /// `up` when every system is up; `down` when readiness fails; otherwise `degraded`.
    pub status: HealthStatus,
    /// Whether the service should receive traffic.
    pub ready: bool,
    /// The policy the verdict was reached under.
    pub policy: ReadinessPolicy,
    /// When the snapshot was taken (wall clock).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub at: SystemTime,
    /// Every system, in name order. Serialized as an object keyed by system name.
    #[cfg_attr(feature = "serde", serde(serialize_with = "json::by_name"))]
    pub systems: Vec<SystemHealth>,
}

impl Health {
    pub(crate) fn new(systems: Vec<SystemHealth>, policy: ReadinessPolicy) -> Health {
        let worst = systems
            .iter()
            .map(|s| s.status)
            .max()
            .unwrap_or(HealthStatus::Up);
        let (status, ready) = match (worst, policy) {
            (HealthStatus::Up, _) => (HealthStatus::Up, true),
            (HealthStatus::Down, ReadinessPolicy::FailOnOpen) => (HealthStatus::Down, false),
            _ => (HealthStatus::Degraded, true),
        };
        Health {
            status,
            ready,
            policy,
            at: SystemTime::now(),
            systems,
        }
    }

    /// The health of `system`, if it is configured.
    pub fn system(&self, system: &str) -> Option<&SystemHealth> {
        self.systems.iter().find(|s| &*s.snapshot.system == system)
    }

    /// 200 while ready, 503 when not.
    pub fn http_status(&self) -> u16 {
        if self.ready {
            200
        } else {
            503
        }
    }
}

/// How the health snapshot's fields are written (feature `serde`).
#[cfg(feature = "serde")]
mod json {
    use serde::{Serialize, Serializer};

    use super::{HealthStatus, SystemHealth};
    use crate::breaker::SetBy;
    use crate::state::{Reason, State};

    /// A system's JSON: flat, in the order [`Health`](super::Health) documents; the
    /// snapshot's `system` (the key in `systems`) and `since` (tokio's clock) are left
    /// out, rates and seconds rounded to the millisecond.
    #[derive(Serialize)]
    struct Json {
        status: HealthStatus,
        state: State,
        failures: u32,
        calls: u32,
        failure_rate: f64,
        opened_by: Option<&'static str>,
        set_by: Option<&'static str>,
        failure_rate_threshold: f64,
        since: String,
        for_seconds: f64,
        retry_after_seconds: Option<f64>,
        open_for_seconds: Option<f64>,
        retry_hint_seconds: Option<f64>,
        in_flight: usize,
        slow_in_flight: usize,
        bulkhead_permits: usize,
        bulkhead_limit: usize,
        observing: bool,
        would_have_refused: u64,
    }

    impl Serialize for SystemHealth {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let snapshot = &self.snapshot;
            let seconds = |d: std::time::Duration| rounded(d.as_secs_f64());
            Json {
                status: self.status,
                state: snapshot.state,
                failures: snapshot.failures,
                calls: snapshot.calls,
                failure_rate: rounded(snapshot.failure_rate),
                opened_by: snapshot.opened_by.as_ref().map(Reason::as_str),
                set_by: snapshot.set_by.map(SetBy::as_str),
                failure_rate_threshold: rounded(self.failure_rate_threshold),
                since: humantime::format_rfc3339_millis(self.entered_at).to_string(),
                for_seconds: seconds(self.in_state_for),
                retry_after_seconds: snapshot.retry_after.map(seconds),
                open_for_seconds: snapshot.open_for.map(seconds),
                retry_hint_seconds: snapshot.retry_hint.map(seconds),
                in_flight: self.in_flight,
                slow_in_flight: self.slow_in_flight,
                bulkhead_permits: self.bulkhead_permits,
                bulkhead_limit: self.bulkhead_limit,
                observing: snapshot.observing,
                would_have_refused: snapshot.would_have_refused,
            }
            .serialize(s)
        }
    }

    /// A rate or a number of seconds, rounded to the millisecond.
    fn rounded(value: f64) -> f64 {
        let rounded = (value * 1000.0).round() / 1000.0;
        // No `-0` in the answer.
        if rounded == 0.0 {
            0.0
        } else {
            rounded
        }
    }

    pub(super) fn by_name<S: Serializer>(
        systems: &[SystemHealth],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(
            systems
                .iter()
                .map(|system| (&*system.snapshot.system, system)),
        )
    }
}
