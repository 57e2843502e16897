//! Transitions in words an on-call engineer reads at 3 a.m., the [`TracingObserver`]
//! that logs them, and the span around every admitted call.
//!
//! A [`Transition`] displays as its log line:
//!
//! | transition | message | level |
//! |---|---|---|
//! | closed → open | `sber opened: 16 of 50 calls failed (32% ≥ 30%)` | WARN |
//! | open → half-open | `sber half-open after 30s` | INFO |
//! | half-open → closed | `sber closed: 3/3 trials succeeded` | INFO |
//! | half-open → open | `sber opened again: trial 2 of 3 failed` | WARN |
//! | operator: force open | `sber forced open by an operator` | WARN |
//! | operator: disable | `sber disabled (forced closed) by an operator: every call goes through, nothing is counted` | WARN |
//! | operator: reset | `sber reset to closed by an operator` | INFO |
//! | settings file: `cb_mode = "forced_open"` / `"disabled"` / back to `"auto"` | `sber forced open by the settings file (cb_mode = "forced_open")`, likewise | WARN / WARN / INFO |
//!
//! An operator's action that finds the breaker already in its target state (a reset of a
//! closed breaker, a second disable) is no transition, and logs nothing
//! ([`Breaker::act`](crate::Breaker::act)).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

#[cfg(feature = "tracing")]
use crate::breaker::state::State;
use crate::breaker::state::{ManualAction, Reason};
use crate::observer::Transition;

/// The operator's action's name: `force_open`, `disable` or `reset`.
#[cfg(feature = "tracing")]
fn action_name(action: ManualAction) -> &'static str {
    match action {
        ManualAction::ForceOpen => "force_open",
        ManualAction::Disable => "disable",
        ManualAction::Reset => "reset",
    }
}

/// The line an on-call engineer reads: `sber opened: 16 of 50 calls failed (32% ≥ 30%)`.
impl fmt::Display for Transition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let system = self.system;
        match self.reason {
            Reason::FailureRate {
                failures,
                calls,
                threshold,
            } => {
                let rate = if calls == 0 {
                    0.0
                } else {
                    f64::from(failures) / f64::from(calls)
                };
                write!(
                    f,
                    "{system} opened: {failures} of {calls} calls failed ({} ≥ {})",
                    Percent(rate),
                    Percent(threshold)
                )
            }
            Reason::OpenElapsed { after } => {
                write!(f, "{system} half-open after {}", Human(after))
            }
            Reason::TrialsSucceeded { trials } => {
                write!(f, "{system} closed: {trials}/{trials} trials succeeded")
            }
            Reason::TrialFailed { succeeded, trials } => {
                let failed = (succeeded + 1).min(trials);
                write!(f, "{system} opened again: trial {failed} of {trials} failed")
            }
            Reason::Manual(ManualAction::ForceOpen) => {
                write!(f, "{system} forced open by an operator")
            }
            Reason::Manual(ManualAction::Disable) => write!(
                f,
                "{system} disabled (forced closed) by an operator: every call goes through, nothing is counted"
            ),
            Reason::Manual(ManualAction::Reset) => {
                write!(f, "{system} reset to closed by an operator")
            }
            Reason::Settings(ManualAction::ForceOpen) => {
                write!(f, "{system} forced open by the settings file (cb_mode = \"forced_open\")")
            }
            Reason::Settings(ManualAction::Disable) => write!(
                f,
                "{system} disabled (forced closed) by the settings file (cb_mode = \"disabled\"): every call goes through, nothing is counted"
            ),
            Reason::Settings(ManualAction::Reset) => write!(
                f,
                "{system} back to closed: the settings file's cb_mode is \"auto\" again"
            ),
        }
    }
}

/// A rate as a percentage with at most one decimal: `32%`, `33.3%`.
struct Percent(f64);

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 1000.0).round();
        if tenths % 10.0 == 0.0 {
            write!(f, "{}%", tenths / 10.0)
        } else {
            write!(f, "{:.1}%", tenths / 10.0)
        }
    }
}

/// A duration as people say it: `250ms`, `30s`, `30.5s`, `2m 5s`, `1h 3m`.
struct Human(Duration);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d < Duration::from_secs(1) {
            return write!(f, "{}ms", d.as_millis());
        }
        if d < Duration::from_secs(60) {
            let tenths = (d.as_secs_f64() * 10.0).round() as u64;
            return if tenths % 10 == 0 {
                write!(f, "{}s", tenths / 10)
            } else {
                write!(f, "{}.{}s", tenths / 10, tenths % 10)
            };
        }
        let secs = (d.as_secs_f64()).round() as u64;
        if secs < 3600 {
            write!(f, "{}m {}s", secs / 60, secs % 60)
        } else {
            write!(f, "{}h {}m", secs / 3600, secs % 3600 / 60)
        }
    }
}

/// An operator's action named in words, as an admin endpoint receives it:
/// `force_open` (or `force-open`), `disable` (or `force_closed`, `force-closed`), `reset`.
/// Bare `open` and `closed` are refused: "closed" would read as "back to normal", which
/// is `reset`, while forcing closed disables the breaker.
impl FromStr for ManualAction {
    type Err = UnknownAction;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "force_open" | "force-open" => Ok(ManualAction::ForceOpen),
            "disable" | "force_closed" | "force-closed" => Ok(ManualAction::Disable),
            "reset" => Ok(ManualAction::Reset),
            _ => Err(UnknownAction(s.to_owned())),
        }
    }
}

/// A name that is not an operator's action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown breaker action `{0}`; expected `force_open`, `disable` (forced closed: every call admitted, nothing counted) or `reset` (back to closed)")]
pub struct UnknownAction(String);

/// Logs every transition as a `tracing` event, target `outbound_guard`, with the fields
/// `system`, `from`, `to`, `reason` (`failure_rate`, `open_elapsed`,
/// `trials_succeeded`, `trial_failed`, `manual`) and, for operators' actions, `action`;
/// the message is the [`Transition`]'s display: `sber opened: 16 of 50 calls failed
/// (32% ≥ 30%)`.
///
/// Entering open, forced open or disabled logs at WARN; half-open and closed at INFO.
///
/// [`Guards::new`](crate::Guards::new) installs it for every system; for a lone guard,
/// pass it in: `Guard::with_observers(settings, vec![Arc::new(TracingObserver)])`.
#[cfg(feature = "tracing")]
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingObserver;

#[cfg(feature = "tracing")]
impl crate::observer::Observer for TracingObserver {
    fn wants_calls(&self) -> bool {
        false // calls have their span, and rejections their DEBUG event
    }

    fn on_transition(&self, t: &Transition<'_>) {
        let system = t.system;
        let from = t.from.as_str();
        let to = t.to.as_str();
        let reason = t.reason.as_str();
        let action = match t.reason {
            Reason::Manual(action) | Reason::Settings(action) => Some(action_name(action)),
            _ => None,
        };
        match t.to {
            State::Open | State::ForcedOpen | State::Disabled => tracing::warn!(
                target: "outbound_guard",
                system,
                from,
                to,
                reason,
                action,
                "{t}"
            ),
            State::HalfOpen | State::Closed => tracing::info!(
                target: "outbound_guard",
                system,
                from,
                to,
                reason,
                action,
                "{t}"
            ),
        }
    }
}

/// The span around one guarded call: `guarded_call{system, outcome}`, at INFO, target
/// `outbound_guard`. Disabled (no allocation, no subscriber call) when nobody wants it.
///
/// One pointer, null while disabled: a `tracing::Span` is 40 bytes, and this value
/// moves with the call's permit through every step, so the span is only boxed (one
/// allocation, next to the subscriber's own work for the span) when a subscriber is
/// interested in it.
#[cfg(feature = "tracing")]
#[derive(Debug)]
pub(crate) struct CallSpan(Option<Box<tracing::Span>>);

#[cfg(feature = "tracing")]
impl CallSpan {
    #[inline]
    pub(crate) fn new(system: &str) -> Self {
        // The callsite's interest is cached: with no subscriber interested this is a
        // load and a compare, and nothing is built.
        let span = tracing::info_span!(
            target: "outbound_guard",
            "guarded_call",
            system,
            outcome = tracing::field::Empty
        );
        if span.is_disabled() {
            CallSpan(None)
        } else {
            Self::boxed(span)
        }
    }

    #[cold]
    fn boxed(span: tracing::Span) -> Self {
        CallSpan(Some(Box::new(span)))
    }

    #[inline]
    pub(crate) fn enter(&self) -> Option<tracing::span::Entered<'_>> {
        self.0.as_deref().map(tracing::Span::enter)
    }

    #[inline]
    pub(crate) fn record(&self, outcome: &'static str) {
        if let Some(span) = &self.0 {
            span.record("outcome", outcome);
        }
    }
}

/// Without the `tracing` feature the span is nothing at all.
#[cfg(not(feature = "tracing"))]
#[derive(Debug)]
pub(crate) struct CallSpan;

/// What entering no span gives.
#[cfg(not(feature = "tracing"))]
pub(crate) struct NotEntered;

#[cfg(not(feature = "tracing"))]
impl CallSpan {
    #[inline]
    pub(crate) fn new(_system: &str) -> Self {
        CallSpan
    }

    #[inline]
    pub(crate) fn enter(&self) -> NotEntered {
        NotEntered
    }

    #[inline]
    pub(crate) fn record(&self, _outcome: &'static str) {}
}

/// A DEBUG event for a call the guard refused: the breaker or the bulkhead said no.
#[inline]
pub(crate) fn rejected(system: &str, cause: &crate::error::Cause) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        target: "outbound_guard",
        system,
        outcome = "rejected",
        reason = cause.as_str(),
        "{system} call rejected: {cause}"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (system, cause);
}

/// An ERROR event for an observer that panicked: the panic was contained (the panic
/// hook has already printed it), and the breaker and the call went on.
#[cold]
pub(crate) fn observer_panicked(system: &str, hook: &'static str) {
    #[cfg(feature = "tracing")]
    tracing::error!(
        target: "outbound_guard",
        system,
        hook,
        "an observer of {system} panicked in {hook}; the panic was contained and the breaker goes on"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (system, hook);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_and_durations_read_like_speech() {
        assert_eq!(Percent(0.32).to_string(), "32%");
        assert_eq!(Percent(0.3).to_string(), "30%");
        assert_eq!(Percent(1.0 / 3.0).to_string(), "33.3%");
        assert_eq!(Percent(0.125).to_string(), "12.5%");
        assert_eq!(Percent(1.0).to_string(), "100%");
        assert_eq!(Human(Duration::from_millis(250)).to_string(), "250ms");
        assert_eq!(Human(Duration::from_secs(30)).to_string(), "30s");
        assert_eq!(Human(Duration::from_millis(30_500)).to_string(), "30.5s");
        assert_eq!(Human(Duration::from_secs(125)).to_string(), "2m 5s");
        assert_eq!(Human(Duration::from_secs(3780)).to_string(), "1h 3m");
    }

    #[test]
    fn actions_parse_from_words() {
        assert_eq!("force_open".parse(), Ok(ManualAction::ForceOpen));
        assert_eq!("force-closed".parse(), Ok(ManualAction::Disable));
        assert_eq!("reset".parse(), Ok(ManualAction::Reset));
        let err = "close".parse::<ManualAction>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown breaker action `close`; expected `force_open`, `disable` (forced closed: every call admitted, nothing counted) or `reset` (back to closed)"
        );
    }
}
