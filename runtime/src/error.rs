//! The guide's `CircuitBreakerError`: what the guard says instead of running a call, or
//! after a call it had to cut short. Adapters map it to their port's error
//! (R-RES-CB-6); it never needs to leave the adapter.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Why the guard refused or cut short a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cause {
    /// The breaker is open; it lets trial calls through after `retry_after`.
    Open {
        /// Time left until the breaker goes half-open.
        retry_after: Duration,
    },
    /// The breaker is half-open and all its trial calls are taken.
    HalfOpenFull {
        /// How many trial calls half-open admits.
        trials: u32,
    },
    /// An operator forced the breaker open.
    ForcedOpen,
    /// Every bulkhead permit stayed taken for the whole `bulkhead_wait`.
    BulkheadFull {
        /// The bulkhead's permits.
        permits: usize,
        /// How long the call waited.
        waited: Duration,
    },
    /// The call ran past `total_timeout` and was cancelled.
    ///
    /// Behind an HTTP client with a read timeout shorter than `total_timeout` — the
    /// guide's defaults (`read_timeout` 30 s, `total_timeout` 35 s), and every client
    /// built by `outbound_guard_reqwest::client_builder`, since the settings require
    /// `read_timeout < total_timeout` — a hung call ends **first at
    /// `read_timeout`, as the client's own error** (`reqwest::Error::is_timeout`), which
    /// the adapter returns as its port's error: the call counts as a `failure` (in the
    /// outcome metric and the breaker's window), not as this cause, and no
    /// `CircuitBreakerError` reaches `error_map`. `Timeout` fires there only when the
    /// whole call outlasts `total_timeout` while each read stays under `read_timeout`:
    /// a response trickling in, retries or several requests inside one guarded call,
    /// or a connect wait plus reads adding up. Either way the call counts against the
    /// system, provided the adapter's `failure_if` classifies the client's timeout as
    /// an outage (`outbound_guard_reqwest::is_transient` does).
    Timeout {
        /// The configured `total_timeout`.
        timeout: Duration,
    },
    /// The call finished but took longer than `cb_slow_threshold`; returned only when the
    /// adapter asked for slow calls to be errors.
    Slow {
        /// How long the call took.
        elapsed: Duration,
        /// The configured `cb_slow_threshold`.
        threshold: Duration,
    },
    /// The call is `wanted`'s, and its adapter holds this system's guard: refused before
    /// it touched this guard's bulkhead or breaker, so that `wanted`'s calls never count
    /// against another system's breaker. A wiring mistake (an adapter built from a struct
    /// literal with another system's guard); [`Guards::adapter`](crate::Guards::adapter)
    /// and [`SystemAdapter::wired`](crate::SystemAdapter::wired) catch it where the
    /// adapter is built.
    WrongGuard {
        /// The system the call's method names.
        wanted: &'static str,
    },
}

impl Cause {
    /// A short `snake_case` name, for metric labels and logs.
    pub fn as_str(&self) -> &'static str {
        match self {
            Cause::Open { .. } => "open",
            Cause::HalfOpenFull { .. } => "half_open_full",
            Cause::ForcedOpen => "forced_open",
            Cause::BulkheadFull { .. } => "bulkhead_full",
            Cause::Timeout { .. } => "timeout",
            Cause::Slow { .. } => "slow",
            Cause::WrongGuard { .. } => "wrong_guard",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Open { retry_after } => {
                write!(
                    f,
                    "circuit open, trial calls in {:.1}s",
                    retry_after.as_secs_f64()
                )
            }
            Cause::HalfOpenFull { trials } => {
                write!(
                    f,
                    "circuit half-open and all {trials} trial calls are taken"
                )
            }
            Cause::ForcedOpen => f.write_str("circuit forced open by an operator"),
            Cause::BulkheadFull { permits, waited } => write!(
                f,
                "bulkhead full: all {permits} permits taken for {:.3}s",
                waited.as_secs_f64()
            ),
            Cause::Timeout { timeout } => {
                write!(f, "total timeout of {:.3}s elapsed", timeout.as_secs_f64())
            }
            Cause::Slow { elapsed, threshold } => write!(
                f,
                "slow call: {:.3}s > threshold {:.3}s",
                elapsed.as_secs_f64(),
                threshold.as_secs_f64()
            ),
            Cause::WrongGuard { wanted } => write!(
                f,
                "a `{wanted}` call reached this system's guard: build its adapter with `guards.get(\"{wanted}\")` (or `guards.adapter(…)`), so that `{wanted}` calls never count against another system's breaker"
            ),
        }
    }
}

/// The guard's error: which system, and why. `error_map` turns it into the port's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{system}: {cause}")]
pub struct CircuitBreakerError {
    system: Arc<str>,
    cause: Cause,
}

impl CircuitBreakerError {
    pub(crate) fn new(system: &Arc<str>, cause: Cause) -> Self {
        CircuitBreakerError {
            system: Arc::clone(system),
            cause,
        }
    }

    /// An error of `system` with `cause`, as the guard would return it: for tests of an
    /// `error_map` and of the handlers that answer it (a 503 with `Retry-After`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use outbound_guard::{Cause, CircuitBreakerError};
    ///
    /// let open = CircuitBreakerError::from_cause("sber", Cause::Open {
    ///     retry_after: Duration::from_secs(12),
    /// });
    /// assert_eq!(open.retry_after(), Some(Duration::from_secs(12)));
    /// assert!(open.is_rejection());
    /// let timeout = CircuitBreakerError::from_cause("sber", Cause::Timeout {
    ///     timeout: Duration::from_secs(3),
    /// });
    /// assert!(!timeout.is_rejection());
    /// assert_eq!(timeout.to_string(), "sber: total timeout of 3.000s elapsed");
    /// ```
    pub fn from_cause(system: &str, cause: Cause) -> Self {
        CircuitBreakerError {
            system: Arc::from(system),
            cause,
        }
    }

    /// The system whose guard refused the call: `sber`.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// Why.
    pub fn cause(&self) -> &Cause {
        &self.cause
    }

    /// Whether the call was never started (open, half-open full, forced open, bulkhead
    /// full, wrong guard), as opposed to started and cut short (timeout, slow).
    pub fn is_rejection(&self) -> bool {
        !matches!(self.cause, Cause::Timeout { .. } | Cause::Slow { .. })
    }

    /// When a caller may usefully try again, for an HTTP `Retry-After` header: the time
    /// left while open, otherwise `None`.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.cause {
            Cause::Open { retry_after } => Some(retry_after),
            _ => None,
        }
    }

    /// The HTTP status a service answers its own caller with when this error is why a
    /// request failed: **503** Service Unavailable for a refusal (open, half-open full,
    /// forced open, bulkhead full: the call was never started, so a retry is safe),
    /// **504** Gateway Timeout for a call the guard cut short (total timeout, a slow
    /// call returned as an error: it was sent, and may have taken effect upstream, so
    /// the caller must not assume it did not), **500** for a call that reached another
    /// system's guard (a wiring mistake a retry cannot mend). A handler may answer 409
    /// instead where the business allows "created but not paid" (R-RES-CB-6); that is its
    /// decision, not the guard's.
    ///
    /// ```
    /// use std::time::Duration;
    /// use outbound_guard::{Cause, CircuitBreakerError};
    ///
    /// let full = CircuitBreakerError::from_cause("sber", Cause::BulkheadFull {
    ///     permits: 8,
    ///     waited: Duration::from_millis(300),
    /// });
    /// assert_eq!(full.http_status(), 503);
    /// assert_eq!(full.http_retry_after(), Duration::from_secs(1));
    /// ```
    pub fn http_status(&self) -> u16 {
        match self.cause {
            Cause::WrongGuard { .. } => 500,
            _ if self.is_rejection() => 503,
            _ => 504,
        }
    }

    /// The `Retry-After` to send with [`http_status`](Self::http_status), for every
    /// cause: whole seconds, rounded up, and never under 1 s (a `Retry-After: 0` invites
    /// every caller back at once); `.as_secs()` is the header's value.
    ///
    /// | cause | `Retry-After` | why |
    /// |---|---|---|
    /// | open | the time left until half-open | no call is admitted before |
    /// | half-open, trials taken | 1 s | the trials in flight decide soon; a retry then meets a closed breaker or an open one with its own time |
    /// | forced open | 30 s, the guide's `cb_open_duration` | an operator's action has no end the guard knows; retry at the pace the breaker itself would probe |
    /// | bulkhead full | the `bulkhead_wait` the call waited | permits free as calls end; the system is busy, not down |
    /// | total timeout, slow | 1 s | the breaker counts the call; if the system is down, the next call meets an open breaker, with its own time |
    /// | wrong guard | 1 s | a 500: the service's own mistake, which no wait mends |
    pub fn http_retry_after(&self) -> Duration {
        let after = match self.cause {
            Cause::Open { retry_after } => retry_after,
            Cause::ForcedOpen => FORCED_OPEN_RETRY_AFTER,
            Cause::BulkheadFull { waited, .. } => waited,
            Cause::HalfOpenFull { .. }
            | Cause::Timeout { .. }
            | Cause::Slow { .. }
            | Cause::WrongGuard { .. } => Duration::ZERO,
        };
        whole_seconds_at_least_one(after)
    }
}

/// The `Retry-After` of a breaker an operator forced open: the guide's `cb_open_duration`.
const FORCED_OPEN_RETRY_AFTER: Duration = Duration::from_secs(30);

/// `after` rounded up to whole seconds, at least one.
fn whole_seconds_at_least_one(after: Duration) -> Duration {
    let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
    Duration::from_secs(secs.max(1))
}

/// [`Guards::get`](crate::Guards::get) was asked for a system the settings do not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no system `{system}` in {origin}; {hint}known systems: {known}")]
pub struct UnknownSystem {
    pub(crate) system: String,
    pub(crate) origin: String,
    pub(crate) hint: String,
    pub(crate) known: String,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Cause, CircuitBreakerError};

    fn answer(cause: Cause) -> (u16, u64) {
        let err = CircuitBreakerError::from_cause("sber", cause);
        (err.http_status(), err.http_retry_after().as_secs())
    }

    #[test]
    fn an_open_breaker_is_503_until_its_trials_rounded_up() {
        let open = |ms| Cause::Open {
            retry_after: Duration::from_millis(ms),
        };
        assert_eq!(answer(open(12_000)), (503, 12));
        assert_eq!(answer(open(2_100)), (503, 3));
        assert_eq!(answer(open(10)), (503, 1));
        assert_eq!(answer(open(0)), (503, 1));
    }

    #[test]
    fn half_open_with_its_trials_taken_is_503_for_a_second() {
        assert_eq!(answer(Cause::HalfOpenFull { trials: 3 }), (503, 1));
    }

    #[test]
    fn forced_open_is_503_at_the_guides_open_duration() {
        assert_eq!(answer(Cause::ForcedOpen), (503, 30));
    }

    #[test]
    fn a_full_bulkhead_is_503_after_the_wait_it_waited() {
        let full = |ms| Cause::BulkheadFull {
            permits: 8,
            waited: Duration::from_millis(ms),
        };
        assert_eq!(answer(full(2_500)), (503, 3));
        assert_eq!(answer(full(0)), (503, 1));
    }

    #[test]
    fn a_call_cut_short_is_504_for_a_second() {
        let timeout = Cause::Timeout {
            timeout: Duration::from_secs(35),
        };
        assert_eq!(answer(timeout), (504, 1));
        let slow = Cause::Slow {
            elapsed: Duration::from_secs(20),
            threshold: Duration::from_secs(15),
        };
        assert_eq!(answer(slow), (504, 1));
    }

    #[test]
    fn a_call_through_another_systems_guard_is_a_500_naming_both() {
        let wrong = Cause::WrongGuard { wanted: "sber" };
        let err = CircuitBreakerError::from_cause("customer", wrong);
        assert_eq!(answer(wrong), (500, 1));
        assert!(err.is_rejection());
        assert_eq!(err.retry_after(), None);
        let message = err.to_string();
        assert!(
            message.starts_with("customer: a `sber` call reached this system's guard")
                && message.contains("guards.get(\"sber\")"),
            "{message}"
        );
    }
}
