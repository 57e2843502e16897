//! A record as its line of the recording's format (`outbound-guard-recording`, the one
//! definition the replay reads too): the guard's verdicts mapped to the format's, and
//! times to microseconds since the Unix epoch.

use std::time::{Duration, SystemTime};

use outbound_guard_recording::{Cause as LineCause, Cut, Line, Outcome as LineOutcome};

use crate::error::Cause;
use crate::observer::Outcome;

/// Microseconds since the Unix epoch (0 before it).
pub(super) fn micros(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Microseconds of a duration.
pub(super) fn span(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// The format's name for a verdict, and for a refusal its cause.
pub(super) fn outcome(outcome: Outcome) -> (LineOutcome, Option<LineCause>) {
    match outcome {
        Outcome::Success => (LineOutcome::Success, None),
        Outcome::Failure => (LineOutcome::Failure, None),
        Outcome::Slow => (LineOutcome::Slow, None),
        Outcome::Timeout => (LineOutcome::Timeout, None),
        Outcome::Cancelled => (LineOutcome::Cancelled, None),
        Outcome::Rejected(cause) => (LineOutcome::Rejected, self::cause(&cause)),
    }
}

fn cause(cause: &Cause) -> Option<LineCause> {
    Some(match cause {
        Cause::Open { .. } => LineCause::Open,
        Cause::HalfOpenFull { .. } => LineCause::HalfOpenFull,
        Cause::ForcedOpen => LineCause::ForcedOpen,
        Cause::BulkheadFull { .. } => LineCause::BulkheadFull,
        // Not the breaker's or the bulkhead's refusals: never the cause of a `rejected`
        // call (a call through another system's guard is not that system's call).
        Cause::Timeout { .. } | Cause::Slow { .. } | Cause::WrongGuard { .. } => return None,
    })
}

/// A call's line. A call `cut` short by the client's `read_timeout` is written
/// `"outcome":"timeout","cut":"read_timeout"`: it lasted at least that long.
pub(super) fn call(
    out: &mut Vec<u8>,
    system: &str,
    start: SystemTime,
    duration: Duration,
    verdict: Outcome,
    cut: bool,
) {
    let (written, cause) = if cut {
        (LineOutcome::Timeout, None)
    } else {
        outcome(verdict)
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
}
