//! A health snapshot of every system, for a readiness endpoint.
//!
//! By default an open breaker **degrades** readiness without failing it: failing it would
//! pull every replica out of the load balancer while the payment provider is down, and
//! the service could no longer even answer "payment unavailable, try later".
//! [`ReadinessPolicy::FailOnOpen`] makes an open breaker fail readiness instead.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::breaker::{Reason, State};

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
pub enum Status {
    /// Closed: calls flow.
    Up,
    /// Half-open (trial calls under way) or disabled by an operator; for the whole
    /// service: some system is not up, but the service stays ready.
    Degraded,
    /// Open or forced open: calls are refused. For the whole service: not ready (only
    /// under [`ReadinessPolicy::FailOnOpen`]).
    Down,
}

impl Status {
    /// `up`, `degraded` or `down`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Up => "up",
            Status::Degraded => "degraded",
            Status::Down => "down",
        }
    }

    fn of(state: State) -> Status {
        match state {
            State::Closed => Status::Up,
            State::HalfOpen | State::Disabled => Status::Degraded,
            State::Open | State::ForcedOpen => Status::Down,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One system's breaker and bulkhead, read at one moment.
///
/// Serialized (feature `serde`) without its name, which keys it in [`Health`]'s
/// `systems`; see [`Health`] for the fields' JSON names.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct SystemHealth {
    /// The system: `sber`.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub system: Arc<str>,
    /// `up` (closed), `degraded` (half-open, disabled) or `down` (open, forced open).
    pub status: Status,
    /// The breaker's state.
    pub state: State,
    /// Failures in the window (closed); slow calls and timeouts count. While open: the
    /// failures that tripped it.
    pub failures: u32,
    /// Outcomes in the window (closed). While open: those it was judged on.
    pub calls: u32,
    /// `failures / calls`; 0 for an empty window. While open: the rate that tripped it.
    #[cfg_attr(feature = "serde", serde(serialize_with = "json::to_the_milli"))]
    pub failure_rate: f64,
    /// While open: why it opened (`failure_rate`, or `trial_failed` in half-open).
    #[cfg_attr(feature = "serde", serde(serialize_with = "json::reason_name"))]
    pub opened_by: Option<Reason>,
    /// The configured `cb_failure_rate` threshold.
    #[cfg_attr(feature = "serde", serde(serialize_with = "json::to_the_milli"))]
    pub failure_rate_threshold: f64,
    /// When it entered this state (tokio's clock).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub since: Instant,
    /// When it entered this state, by the wall clock: what a person reading the
    /// health answer can compare with their own clock.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "since", serialize_with = "json::rfc3339")
    )]
    pub entered_at: SystemTime,
    /// How long it has been in this state.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "for_seconds", serialize_with = "json::seconds")
    )]
    pub in_state_for: Duration,
    /// While open: time left until trial calls are let through.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "retry_after_seconds", serialize_with = "json::some_seconds")
    )]
    pub retry_after: Option<Duration>,
    /// Bulkhead permits taken right now.
    pub in_flight: usize,
    /// Of those, permits held by calls already past `cb_slow_threshold`: all of them
    /// means the system hangs (and waiters turned away count against the breaker).
    pub slow_in_flight: usize,
    /// The bulkhead's size.
    pub bulkhead_permits: usize,
}

impl SystemHealth {
    pub(crate) fn of(guard: &crate::Guard) -> SystemHealth {
        let breaker = guard.breaker();
        let snapshot = breaker.snapshot();
        let in_state_for = Instant::now().saturating_duration_since(snapshot.since);
        SystemHealth {
            status: Status::of(snapshot.state),
            state: snapshot.state,
            failures: snapshot.failures,
            calls: snapshot.calls,
            failure_rate: snapshot.failure_rate,
            opened_by: snapshot.opened_by,
            failure_rate_threshold: breaker.failure_rate_threshold(),
            since: snapshot.since,
            entered_at: SystemTime::now()
                .checked_sub(in_state_for)
                .unwrap_or(UNIX_EPOCH),
            in_state_for,
            retry_after: snapshot.retry_after,
            in_flight: guard.in_flight(),
            slow_in_flight: guard.slow_in_flight(),
            bulkhead_permits: guard.bulkhead_permits(),
            system: snapshot.system,
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
///           "opened_by":"failure_rate","failure_rate_threshold":0.3,
///           "since":"2026-05-01T03:12:09.512Z","for_seconds":12.5,"retry_after_seconds":17.5,
///           "in_flight":0,"slow_in_flight":0,"bulkhead_permits":8}}}
/// ```
///
/// `since` is the wall-clock time (UTC, RFC 3339, to the millisecond) the state was
/// entered; rates and seconds are rounded to the millisecond; `retry_after_seconds` is
/// `null` unless open. The window restarts with every state; while open, `failures`,
/// `calls` and `failure_rate` are the figures that tripped it and `opened_by` the reason
/// (`null` in other states). A breaker whose open duration has passed reads
/// `half_open`, never `open` with nothing left.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{Guards, Settings, Status};
///
/// let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
/// let guards = Guards::new(&settings);
/// guards.get("sber").unwrap().breaker().force_open();
///
/// let health = guards.health();
/// assert_eq!(health.status, Status::Degraded); // an open breaker degrades...
/// assert!(health.ready); // ...but does not fail readiness by default
/// assert_eq!(health.http_status(), 200);
/// assert_eq!(health.system("sber").unwrap().status, Status::Down);
/// # #[cfg(feature = "serde")]
/// assert!(serde_json::to_string(&health).unwrap().starts_with(r#"{"status":"degraded","ready":true,"policy":"degrade_on_open","systems":{"customer":{"status":"up","state":"closed","#));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Health {
    /// `up` when every system is up; `down` when readiness fails; otherwise `degraded`.
    pub status: Status,
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
        let worst = systems.iter().map(|s| s.status).max().unwrap_or(Status::Up);
        let (status, ready) = match (worst, policy) {
            (Status::Up, _) => (Status::Up, true),
            (Status::Down, ReadinessPolicy::FailOnOpen) => (Status::Down, false),
            _ => (Status::Degraded, true),
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
        self.systems.iter().find(|s| &*s.system == system)
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
// serde's `serialize_with` hands each function a reference to the field as declared.
#[allow(clippy::ref_option, clippy::trivially_copy_pass_by_ref)]
mod json {
    use std::time::{Duration, SystemTime};

    use serde::Serializer;

    use super::SystemHealth;
    use crate::breaker::Reason;

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

    pub(super) fn to_the_milli<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(rounded(*value))
    }

    pub(super) fn seconds<S: Serializer>(value: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(rounded(value.as_secs_f64()))
    }

    pub(super) fn some_seconds<S: Serializer>(
        value: &Option<Duration>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => seconds(value, s),
            None => s.serialize_none(),
        }
    }

    pub(super) fn reason_name<S: Serializer>(
        value: &Option<Reason>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(reason) => s.serialize_str(reason.as_str()),
            None => s.serialize_none(),
        }
    }

    /// UTC, to the millisecond: `2026-05-01T03:12:09.512Z`.
    pub(super) fn rfc3339<S: Serializer>(value: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(*value))
    }

    pub(super) fn by_name<S: Serializer>(
        systems: &[SystemHealth],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(systems.iter().map(|system| (&*system.system, system)))
    }
}

/// The state's [`as_str`](State::as_str).
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl serde::Serialize for State {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
