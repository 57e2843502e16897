//! A record as its line of the recording's format (`outbound-guard-recording`, the one
//! definition the replay reads too): the guard's verdicts mapped to the format's, and
//! times to microseconds since the Unix epoch.

use std::time::{Duration, SystemTime};

use outbound_guard::{Cause, Outcome};
use outbound_guard_recording::{Cause as LineCause, Cut, Line, Outcome as LineOutcome};

/// Microseconds since the Unix epoch (0 before it).
pub(crate) fn micros(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Microseconds of a duration.
pub(crate) fn span(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// The format's name for a verdict, and for a refusal its cause; `None` for a verdict
/// the format has no name for (one the core gained after this recorder was written:
/// the two are released together, so this does not happen to a service).
pub(crate) fn outcome(outcome: Outcome) -> Option<(LineOutcome, Option<LineCause>)> {
    Some(match outcome {
        Outcome::Success => (LineOutcome::Success, None),
        Outcome::Failure => (LineOutcome::Failure, None),
        Outcome::Slow => (LineOutcome::Slow, None),
        Outcome::Timeout => (LineOutcome::Timeout, None),
        Outcome::Cancelled => (LineOutcome::Cancelled, None),
        Outcome::Rejected(cause) => (LineOutcome::Rejected, self::cause(&cause)),
        _ => return None,
    })
}

fn cause(cause: &Cause) -> Option<LineCause> {
    Some(match cause {
        Cause::Open { .. } => LineCause::Open,
        Cause::HalfOpenFull { .. } => LineCause::HalfOpenFull,
        Cause::ForcedOpen => LineCause::ForcedOpen,
        Cause::BulkheadFull { .. } => LineCause::BulkheadFull,
        // Not the breaker's or the bulkhead's refusals (`timeout`, `slow`, `wrong_guard`):
        // never the cause of a `rejected` call (a call through another system's guard is
        // not that system's call).
        _ => return None,
    })
}

/// A call's line. A call `cut` short by the client's `read_timeout` is written
/// `"outcome":"timeout","cut":"read_timeout"`: it lasted at least that long. Returns
/// whether it wrote one: a verdict the format has no name for writes nothing.
pub(crate) fn call(
    out: &mut Vec<u8>,
    system: &str,
    start: SystemTime,
    duration: Duration,
    verdict: Outcome,
    cut: bool,
) -> bool {
    let Some((written, cause)) = (if cut {
        Some((LineOutcome::Timeout, None))
    } else {
        outcome(verdict)
    }) else {
        return false;
    };
    Line::call(
        system,
        micros(start),
        span(duration),
        written,
        cut.then_some(Cut::ReadTimeout),
        cause,
    )
    .write(out);
    true
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use outbound_guard::{Cause, Outcome};

    use super::call;

    /// The format's names (`outbound-guard-recording`, derived by serde) are the guard's own
    /// (`Outcome::as_str`, `Cause::as_str`, the metrics' labels): every verdict and cause
    /// written reads as its label, so the two cannot drift apart.
    #[test]
    fn the_format_names_every_verdict_and_cause_as_the_guard_does() {
        let causes = [
            Cause::Open {
                retry_after: Duration::ZERO,
            },
            Cause::HalfOpenFull { trials: 1 },
            Cause::ForcedOpen,
            Cause::BulkheadFull {
                permits: 1,
                waited: Duration::ZERO,
            },
        ];
        let mut outcomes = vec![
            Outcome::Success,
            Outcome::Failure,
            Outcome::Slow,
            Outcome::Timeout,
            Outcome::Cancelled,
        ];
        outcomes.extend(causes.iter().copied().map(Outcome::Rejected));
        for outcome in outcomes {
            let mut out = Vec::new();
            let at = SystemTime::UNIX_EPOCH + Duration::from_micros(1_764_858_808_123_456);
            let written = call(
                &mut out,
                "s\"q\n",
                at,
                Duration::from_micros(12_345),
                outcome,
                false,
            );
            assert!(written, "{outcome:?}");
            let line: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(line["outcome"], outcome.as_str(), "{line}");
            assert_eq!(line["system"], "s\"q\n");
            assert_eq!(line["start"].as_f64(), Some(1_764_858_808_123.456));
            assert_eq!(line["duration_ms"].as_f64(), Some(12.345));
            if let Outcome::Rejected(cause) = outcome {
                assert_eq!(line["cause"], cause.as_str(), "{line}");
            } else {
                assert!(line.get("cause").is_none(), "{line}");
            }
        }
    }
}
