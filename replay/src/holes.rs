//! Holes in a recording: stretches where its traffic fell while the breaker it ran with
//! was not closed. A recording that holds the guard's refusals (the recorder writes each
//! as `rejected`) has none: its traffic is every call the service made. A log written
//! behind an enforcing guard (an egress proxy's) has one wherever that guard refused
//! calls, which never reached the proxy: the calls are missing, not refused. What a
//! looser setting would have done with them, and how many there were, is not in it.
//!
//! Found from the replay of the settings the service ran with: each stretch from an
//! opening to the next close where the calls that started fell below [`FALL`] of those
//! in the stretch as long before it (at least [`LEAST_BEFORE`] calls, over at least
//! [`REFERENCE`]), for at least [`LEAST_SPAN`].

use outbound_guard::State;

use super::engine::Replay;
use super::recording::Call;

/// A stretch is a hole where its calls a second fell below this share of those before.
pub(crate) const FALL: f64 = 0.25;
/// The stretch before must hold at least this many calls to say the traffic fell.
pub(crate) const LEAST_BEFORE: usize = 20;
/// The stretch before is as long as the hole, and at least this long (µs).
pub(crate) const REFERENCE: u64 = 5_000_000;
/// A hole lasts at least this long (µs).
pub(crate) const LEAST_SPAN: u64 = 1_000_000;

/// A stretch of the recording where its traffic fell while the breaker it ran with was
/// open or half-open.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Hole {
    /// Microseconds since the recording's start: the replayed breaker's opening.
    pub start: u64,
    /// Its next close (or the recording's last call).
    pub end: u64,
    /// Calls a second in the stretch before it, and in it.
    pub rate_before: f64,
    pub rate_during: f64,
}

/// The holes of `calls` (in start order), from `base`, their replay under the settings
/// the service ran with.
pub(crate) fn holes(calls: &[Call], base: &Replay) -> Vec<Hole> {
    let last = calls.last().map_or(0, |c| c.start + 1);
    let mut stretches = Vec::new();
    let mut opened: Option<u64> = None;
    for t in &base.transitions {
        match (opened, t.to) {
            (None, to) if to != State::Closed => opened = Some(t.at),
            (Some(start), State::Closed) => {
                stretches.push((start, t.at));
                opened = None;
            }
            _ => {}
        }
    }
    stretches.extend(opened.map(|start| (start, last.max(start))));
    let count = |from: u64, to: u64| {
        calls.partition_point(|c| c.start < to) - calls.partition_point(|c| c.start < from)
    };
    let per_second = |n: usize, micros: u64| n as f64 * 1e6 / micros as f64;
    stretches
        .into_iter()
        .filter(|(start, end)| end - start >= LEAST_SPAN)
        .filter_map(|(start, end)| {
            let reference = (end - start).max(REFERENCE);
            let from = start.saturating_sub(reference);
            let before = count(from, start);
            let during = count(start, end);
            let hole = Hole {
                start,
                end,
                rate_before: per_second(before, start - from),
                rate_during: per_second(during, end - start),
            };
            (start > from && before >= LEAST_BEFORE && hole.rate_during < FALL * hole.rate_before)
                .then_some(hole)
        })
        .collect()
}

/// Whether the whole second `second` (of the recording) lies in one of `holes`.
pub(crate) fn in_hole(holes: &[Hole], second: u64) -> bool {
    let (from, to) = (second * 1_000_000, (second + 1) * 1_000_000);
    holes.iter().any(|h| h.start <= from && to <= h.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::Recorded;
    use crate::transitions::BreakerTransition;

    fn replay(transitions: &[(u64, State)]) -> Replay {
        Replay {
            fates: Vec::new(),
            transitions: transitions
                .iter()
                .map(|&(at, to)| BreakerTransition {
                    at,
                    from: State::Closed,
                    to,
                    open: None,
                    why: String::new(),
                    guessed: false,
                })
                .collect(),
            asked: Vec::new(),
            decisions: 0,
            times: Vec::new(),
            calls: Vec::new(),
            limits: Vec::new(),
        }
    }

    /// A call every 20 ms over `seconds`, but none in `gaps`.
    fn calls(seconds: u64, gaps: &[(u64, u64)]) -> Vec<Call> {
        (0..seconds * 50)
            .map(|i| i * 20_000)
            .filter(|&at| !gaps.iter().any(|&(a, b)| (a..b).contains(&at)))
            .map(|start| Call {
                start,
                duration: 1_000,
                outcome: Recorded::Success,
            })
            .collect()
    }

    #[test]
    fn traffic_that_stops_while_the_breaker_is_open_is_a_hole() {
        let s = 1_000_000;
        let calls = calls(60, &[(10 * s, 40 * s)]);
        let base = replay(&[
            (10 * s, State::Open),
            (40 * s, State::HalfOpen),
            (40 * s + 30_000, State::Closed),
        ]);
        let holes = holes(&calls, &base);
        assert_eq!(holes.len(), 1, "{holes:?}");
        assert_eq!((holes[0].start, holes[0].end), (10 * s, 40 * s + 30_000));
        assert!((holes[0].rate_before - 50.0).abs() < 0.01, "{holes:?}");
        assert!(holes[0].rate_during < 0.1, "{holes:?}");
        assert!(in_hole(&holes, 12) && !in_hole(&holes, 9) && !in_hole(&holes, 40));
    }

    #[test]
    fn traffic_that_goes_on_is_no_hole_nor_is_a_short_or_quiet_stretch() {
        let s = 1_000_000;
        // Every call recorded (refused ones too): the traffic went on.
        let open = replay(&[(10 * s, State::Open), (40 * s, State::HalfOpen)]);
        assert_eq!(holes(&calls(60, &[]), &open), vec![]);
        // Shorter than a second.
        let short = replay(&[(10 * s, State::Open), (10 * s + 900_000, State::Closed)]);
        assert_eq!(holes(&calls(60, &[(10 * s, 11 * s)]), &short), vec![]);
        // Too few calls before it to say the traffic fell.
        let quiet: Vec<Call> = calls(60, &[(10 * s, 40 * s)])
            .into_iter()
            .step_by(20)
            .collect();
        assert_eq!(holes(&quiet, &open), vec![]);
    }
}
