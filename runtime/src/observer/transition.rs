//! [`Transition`]: a breaker's change of state, and the words an on-call engineer reads
//! at 3 a.m.: its `Display` is the log line.
//!
//! | transition | message | level |
//! |---|---|---|
//! | closed → open | `sber opened: 16 of 50 calls failed (32% ≥ 30%)` | WARN |
//! | open → half-open | `sber half-open after 30s` | INFO |
//! | half-open → closed | `sber closed: 3/3 trials succeeded` | INFO |
//! | half-open → open | `sber opened again: trial 2 of 3 failed` | WARN |
//! | into open, as the upstream's retry hint asked | `sber opened for 120 s, as its Retry-After asked: 10 of 10 calls failed (100% ≥ 50%)` | WARN |
//! | half-open → open, backed off (`cb_open_backoff`) | `sber opened again for 1m 0s (backed off): trial 1 of 3 failed` | WARN |
//! | operator: force open | `sber forced open by an operator` | WARN |
//! | operator: disable | `sber disabled (forced closed) by an operator: every call goes through, nothing is counted` | WARN |
//! | operator: reset | `sber reset to closed by an operator` | INFO |
//! | operator: reset of a closed breaker (no transition) | `sber reset by an operator: window cleared, 4 of 10 had failed` | INFO |
//! | observe mode (`cb_mode = "observe"`): each of the first four | `sber would have opened: 16 of 50 calls failed (32% ≥ 30%)`, `sber would be half-open after 30s`, `sber would have closed: 3/3 trials succeeded`, `sber would have opened again: trial 2 of 3 failed` | as above |
//! | settings file: `cb_mode = "forced_open"` / `"disabled"` / back to `"auto"` | `sber forced open by the settings file (cb_mode = "forced_open")`, likewise | WARN / WARN / INFO |
//!
//! Only a change of state is a transition. A reset of a closed breaker empties its window
//! and logs the line above, but is no transition (no observer hears of it, no
//! `closed → closed` is counted); a reset of an empty closed breaker (which still
//! forgets the calls in flight) and any other action that finds the breaker already in
//! its target state (a second disable) log nothing
//! ([`Breaker::act`](crate::Breaker::act)). The level is the
//! [`TracingObserver`](crate::TracingObserver)'s.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use crate::action::ManualAction;
use crate::state::{Reason, State};

/// A breaker's change of state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transition<'a> {
    /// The system: `sber`.
    pub system: &'a str,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
    /// Why.
    pub reason: Reason,
    /// When (tokio's clock, so paused time applies).
    pub at: Instant,
    /// Into open: how long it stays open, and what decided it. `None` for other states.
    pub open: Option<OpenPeriod>,
    /// Made in observe mode (`cb_mode = "observe"`): what the breaker would have done,
    /// refusing nothing. Its line says so: `sber would have opened: …`.
    pub observing: bool,
}

/// An open period: how long, and what made it longer than `cb_open_duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenPeriod {
    /// From the opening to the trials: `cb_open_duration`, backed off, with jitter, or as
    /// the upstream's retry hint asked; at most `cb_open_max`.
    pub length: Duration,
    /// The upstream's retry hint (`Retry-After`, `grpc-retry-pushback-ms`), capped by
    /// `cb_open_max`, when it made the period longer than the breaker's own.
    pub retry_hint: Option<Duration>,
    /// Whether `cb_open_backoff` lengthened it: a re-opening after a failed trial.
    pub backed_off: bool,
}

/// The line an on-call engineer reads: `sber opened: 16 of 50 calls failed (32% ≥ 30%)`.
impl fmt::Display for Transition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let system = self.system;
        // Observe mode: what it would have done (`sber would have opened: …`).
        let would = if self.observing { " would have" } else { "" };
        if let (Some(open), Reason::FailureRate { .. } | Reason::TrialFailed { .. }) =
            (self.open, self.reason)
        {
            let again = if matches!(self.reason, Reason::TrialFailed { .. }) {
                " again"
            } else {
                ""
            };
            if open.retry_hint.is_some() {
                write!(
                    f,
                    "{system}{would} opened{again} for {}, as its Retry-After asked: ",
                    Seconds(open.length)
                )?;
                return self.why_opened(f);
            }
            if open.backed_off {
                write!(
                    f,
                    "{system}{would} opened{again} for {} (backed off): ",
                    Human(open.length)
                )?;
                return self.why_opened(f);
            }
        }
        match self.reason {
            Reason::FailureRate { .. } => {
                write!(f, "{system}{would} opened: ")?;
                self.why_opened(f)
            }
            Reason::OpenElapsed { after } => {
                let would = if self.observing { " would be" } else { "" };
                write!(f, "{system}{would} half-open after {}", Human(after))
            }
            Reason::TrialsSucceeded { trials } => {
                write!(f, "{system}{would} closed: {trials}/{trials} trials succeeded")
            }
            Reason::TrialFailed { .. } => {
                write!(f, "{system}{would} opened again: ")?;
                self.why_opened(f)
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
            Reason::Settings(ManualAction::Reset) => {
                let mode = if self.observing { "observe" } else { "auto" };
                write!(
                    f,
                    "{system} back to closed: the settings file's cb_mode is \"{mode}\""
                )
            }
            // Observe mode's switch moves no state, so no transition carries it.
            Reason::Manual(action @ (ManualAction::Observe | ManualAction::Enforce))
            | Reason::Settings(action @ (ManualAction::Observe | ManualAction::Enforce)) => {
                write!(f, "{system}: {action}")
            }
        }
    }
}

impl Transition<'_> {
    /// What opened it, after a line that already said how long it is open for:
    /// `16 of 50 calls failed (32% ≥ 30%)`, `trial 2 of 3 failed`.
    fn why_opened(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
                    "{failures} of {calls} calls failed ({} ≥ {})",
                    Percent(rate),
                    Percent(threshold)
                )
            }
            Reason::TrialFailed { succeeded, trials } => {
                let failed = (succeeded + 1).min(trials);
                write!(f, "trial {failed} of {trials} failed")
            }
            _ => Ok(()),
        }
    }
}

/// A duration in whole seconds when it is one, as an upstream's hint is written:
/// `120 s`, `1.5 s`, `250 ms`.
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d < Duration::from_secs(1) {
            write!(f, "{} ms", d.as_millis())
        } else if d.subsec_millis() == 0 {
            write!(f, "{} s", d.as_secs())
        } else {
            write!(f, "{:.1} s", d.as_secs_f64())
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
}
