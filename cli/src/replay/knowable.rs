//! Which settings a recording can tell. A call the recording's client cut at its
//! `read_timeout`, or the recording's guard at its `total_timeout`, had not answered by
//! then: how it would have ended under a longer limit is not recorded. A setting whose
//! `read_timeout` (or `total_timeout`) is longer than any call of the recording was
//! allowed, where some call reached that limit, is flagged and its figures are not
//! given: they would rest on an answer nobody saw.

use outbound_guard_settings::SystemSettings;

use super::recording::{Recorded, SystemRecording};
use super::report::span;

/// The `read_timeout` the recording's calls were allowed: the recorder's limits lines
/// (the longest), else the longest call its client cut; `None` if neither is known.
pub(crate) fn read_limit(recording: &SystemRecording) -> Option<std::time::Duration> {
    let micros = recording.limits.map(|(read, _)| read).or_else(|| {
        recording
            .calls
            .iter()
            .filter(|c| c.outcome == Recorded::Cut)
            .map(|c| u64::from(c.duration))
            .max()
    })?;
    Some(std::time::Duration::from_micros(micros))
}

/// Why `recording` cannot tell `settings`: one sentence a reason, none when it
/// can be.
pub(crate) fn cannot_tell(recording: &SystemRecording, settings: &SystemSettings) -> Vec<String> {
    let mut reasons = Vec::new();
    let longest = |outcome: Recorded| {
        recording
            .calls
            .iter()
            .filter(|c| c.outcome == outcome)
            .map(|c| u64::from(c.duration))
            .max()
    };
    let count = |outcome: Recorded| {
        recording
            .calls
            .iter()
            .filter(|c| c.outcome == outcome)
            .count()
    };
    let micros = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    // The limits the recorder wrote; without them, the longest call that reached one.
    let checks = [
        (
            "read_timeout",
            Recorded::Cut,
            recording.limits.map(|(read, _)| read),
            settings.read_timeout(),
            "cut by the client's read_timeout",
        ),
        (
            "total_timeout",
            Recorded::Timeout,
            recording.limits.map(|(_, total)| total),
            settings.total_timeout(),
            "cut by the guard's total_timeout",
        ),
    ];
    for (key, outcome, recorded, wanted, how) in checks {
        let cut = count(outcome);
        let Some(limit) = recorded.or_else(|| longest(outcome)) else {
            continue;
        };
        if cut > 0 && micros(wanted) > limit {
            reasons.push(format!(
                "{key} = {} is longer than the recording's {}: {} {how} there had not answered, and what {} would have answered later is not recorded",
                span(micros(wanted)),
                span(limit),
                crate::output::counted(cut, "call", "calls"),
                if cut == 1 { "it" } else { "they" },
            ));
        }
    }
    reasons
}
