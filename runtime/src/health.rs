//! A health snapshot of every system, for a readiness endpoint.
//!
//! By default an open breaker **degrades** readiness without failing it: failing it would
//! pull every replica out of the load balancer while the payment provider is down, and
//! the service could no longer even answer "payment unavailable, try later".
//! [`ReadinessPolicy::FailOnOpen`] makes an open breaker fail readiness instead.

use std::fmt::{self, Write as _};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::breaker::{Reason, State};

/// How an open breaker counts towards the service's readiness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ReadinessPolicy {
    /// An open (or forced open) breaker makes the service `degraded`, still ready: the
    /// service keeps answering, with its fallback or a clear 503 of its own.
    #[default]
    DegradeOnOpen,
    /// An open (or forced open) breaker makes the service `down`, not ready.
    FailOnOpen,
}

/// A verdict: of one system, or of the whole service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SystemHealth {
    /// The system: `sber`.
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
    pub failure_rate: f64,
    /// While open: why it opened (`failure_rate`, or `trial_failed` in half-open).
    pub opened_by: Option<Reason>,
    /// The configured `cb_failure_rate` threshold.
    pub failure_rate_threshold: f64,
    /// When it entered this state (tokio's clock).
    pub since: Instant,
    /// How long it has been in this state.
    pub in_state_for: Duration,
    /// While open: time left until trial calls are let through.
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
        SystemHealth {
            status: Status::of(snapshot.state),
            state: snapshot.state,
            failures: snapshot.failures,
            calls: snapshot.calls,
            failure_rate: snapshot.failure_rate,
            opened_by: snapshot.opened_by,
            failure_rate_threshold: breaker.failure_rate_threshold(),
            since: snapshot.since,
            in_state_for: Instant::now().saturating_duration_since(snapshot.since),
            retry_after: snapshot.retry_after,
            in_flight: guard.in_flight(),
            slow_in_flight: guard.slow_in_flight(),
            bulkhead_permits: guard.bulkhead_permits(),
            system: snapshot.system,
        }
    }
}

/// Every system's health and the service's readiness verdict. [`Health::to_json`] gives
/// the body of a `/health/ready` answer, [`Health::http_status`] its status code.
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
/// assert!(health.to_json().starts_with(r#"{"status":"degraded","ready":true,"policy":"degrade_on_open","systems":{"customer":{"status":"up","state":"closed","#));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Health {
    /// `up` when every system is up; `down` when readiness fails; otherwise `degraded`.
    pub status: Status,
    /// Whether the service should receive traffic.
    pub ready: bool,
    /// The policy the verdict was reached under.
    pub policy: ReadinessPolicy,
    /// When the snapshot was taken (wall clock).
    pub at: SystemTime,
    /// Every system, in name order.
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

    /// The snapshot as a JSON object, hand-written so that users need no serde:
    ///
    /// ```json
    /// {"status":"degraded","ready":true,"policy":"degrade_on_open","systems":{
    ///   "sber":{"status":"down","state":"open","failures":3,"calls":10,"failure_rate":0.3,
    ///           "opened_by":"failure_rate","failure_rate_threshold":0.3,
    ///           "since":"2026-05-01T03:12:09.512Z","for_seconds":12.5,"retry_after_seconds":17.5,
    ///           "in_flight":0,"slow_in_flight":0,"bulkhead_permits":8}}}
    /// ```
    ///
    /// `since` is the wall-clock time (UTC, RFC 3339) the state was entered;
    /// `retry_after_seconds` is `null` unless open. The window restarts with every
    /// state; while open, `failures`, `calls` and `failure_rate` are the figures that
    /// tripped it and `opened_by` the reason (`null` in other states). A breaker whose
    /// open duration has passed reads `half_open`, never `open` with nothing left.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(128 + 320 * self.systems.len());
        let policy = match self.policy {
            ReadinessPolicy::DegradeOnOpen => "degrade_on_open",
            ReadinessPolicy::FailOnOpen => "fail_on_open",
        };
        let _ = write!(
            out,
            r#"{{"status":"{}","ready":{},"policy":"{policy}","systems":{{"#,
            self.status, self.ready
        );
        for (i, s) in self.systems.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_string(&mut out, &s.system);
            let since = self.at.checked_sub(s.in_state_for).unwrap_or(UNIX_EPOCH);
            let _ = write!(
                out,
                r#":{{"status":"{}","state":"{}","failures":{},"calls":{},"failure_rate":{},"opened_by":{},"failure_rate_threshold":{},"since":"{}","for_seconds":{},"retry_after_seconds":{},"in_flight":{},"slow_in_flight":{},"bulkhead_permits":{}}}"#,
                s.status,
                s.state,
                s.failures,
                s.calls,
                JsonNumber(s.failure_rate),
                match s.opened_by {
                    Some(reason) => format!("\"{}\"", reason.as_str()),
                    None => "null".to_owned(),
                },
                JsonNumber(s.failure_rate_threshold),
                Rfc3339(since),
                JsonNumber(s.in_state_for.as_secs_f64()),
                match s.retry_after {
                    Some(d) => JsonNumber(d.as_secs_f64()).to_string(),
                    None => "null".to_owned(),
                },
                s.in_flight,
                s.slow_in_flight,
                s.bulkhead_permits,
            );
        }
        out.push_str("}}");
        out
    }
}

/// Writes `s` as a JSON string, escaped.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A finite number as JSON writes it (to the millisecond for durations and rates);
/// `null` for NaN or infinity, which JSON cannot hold.
struct JsonNumber(f64);

impl fmt::Display for JsonNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.is_finite() {
            return f.write_str("null");
        }
        let rounded = (self.0 * 1000.0).round() / 1000.0;
        // `Display` for f64 never uses exponents and prints `-0` for negative zero.
        write!(f, "{}", if rounded == 0.0 { 0.0 } else { rounded })
    }
}

/// A wall-clock time as RFC 3339 in UTC, to the millisecond: `2026-05-01T03:12:09.512Z`.
struct Rfc3339(SystemTime);

impl fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let since_epoch = self.0.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since_epoch.as_secs();
        let millis = since_epoch.subsec_millis();
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        let (year, month, day) = civil_from_days(days);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339() {
        let at = |secs: u64, millis: u64| {
            Rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
                .to_string()
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_700_000_000, 123), "2023-11-14T22:13:20.123Z");
        assert_eq!(at(4_102_444_799, 999), "2099-12-31T23:59:59.999Z");
    }

    #[test]
    fn json_numbers_and_strings_are_valid() {
        assert_eq!(JsonNumber(0.32).to_string(), "0.32");
        assert_eq!(JsonNumber(30.0).to_string(), "30");
        assert_eq!(JsonNumber(1.0 / 3.0).to_string(), "0.333");
        assert_eq!(JsonNumber(-0.0).to_string(), "0");
        assert_eq!(JsonNumber(f64::NAN).to_string(), "null");
        let mut out = String::new();
        json_string(&mut out, "a\"b\\c\n\u{1}é");
        assert_eq!(out, r#""a\"b\\c\n\u0001é""#);
    }
}
