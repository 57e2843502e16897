//! Which settings a recording can tell. A call the recording's client cut at its
//! `read_timeout`, or the recording's guard at its `total_timeout`, had not answered by
//! then: how it would have ended under a longer limit is not recorded. A setting whose
//! `read_timeout` (or `total_timeout`) is longer than any call of the recording was
//! allowed, where some call reached that limit, is flagged and its figures are not
//! given: they would rest on an answer nobody saw.
//!
//! An adaptive bulkhead (`bulkhead = "adaptive"`) lowers its limit, down to
//! `bulkhead_floor`, while the upstream's latency says calls queue there: a recording's
//! latencies did not react to the calls the replayed guard would have let in, so how
//! that limit would have moved is not recorded. Where more calls than the floor may be
//! in flight at once, the limit may have refused or kept waiting some of them, and a
//! call it refuses never reaches the breaker: every figure could change, and none is
//! given. Where the floor is never reached, the limit never binds and the replay holds.

use outbound_guard_settings::SystemSettings;

use super::engine::TIMER_SLACK;
use super::guess;
use super::recording::{Recorded, SystemRecording};
use crate::words::span;

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
                crate::words::counted(cut, "call", "calls"),
                if cut == 1 { "it" } else { "they" },
            ));
        }
    }
    reasons.extend(adaptive(recording, settings));
    reasons
}

/// Why an adaptive bulkhead cannot be told on `recording`: the most calls that may be
/// in flight at once is above its floor. Each call runs its recorded duration, one
/// without an answer, cut or timed out up to `total_timeout` (and the timers' slack).
fn adaptive(recording: &SystemRecording, settings: &SystemSettings) -> Option<String> {
    if !settings.bulkhead_adaptive() {
        return None;
    }
    let floor = usize::try_from(settings.bulkhead_floor()).unwrap_or(usize::MAX);
    let total = u64::try_from(settings.total_timeout().as_micros())
        .unwrap_or(u64::MAX)
        .saturating_add(TIMER_SLACK);
    let mut ends = std::collections::BinaryHeap::new();
    let mut most = 0;
    for c in &recording.calls {
        let runs = if guess::unknown(c) || matches!(c.outcome, Recorded::Timeout | Recorded::Cut) {
            total
        } else {
            u64::from(c.duration).min(total)
        };
        while ends
            .peek()
            .is_some_and(|e: &std::cmp::Reverse<u64>| e.0 <= c.start)
        {
            ends.pop();
        }
        ends.push(std::cmp::Reverse(c.start.saturating_add(runs)));
        most = most.max(ends.len());
    }
    (most > floor).then(|| {
        format!(
            "bulkhead = \"adaptive\" moves its limit between bulkhead_floor = {floor} and {} permits as the upstream's latency reacts to the calls in flight, and the recording's latencies did not react to the replayed guard's calls: up to {} may be in flight at once, above the floor, so which the limit would have refused or kept waiting is not recorded",
            settings.bulkhead_permits(),
            crate::words::counted(most, "call", "calls"),
        )
    })
}
