//! What a replay means: the figures of one system under one setting, from the
//! recording's calls and the replayed guard's fate of each.

use outbound_guard::State;

use super::engine::{Fate, Replay};
use super::recording::{Call, Recorded};

/// A stretch of the recording where the upstream was failing, by the upstream's own
/// behaviour: one-second bins where at least [`FAILING_SHARE`] of the calls that
/// reached it failed, joined across gaps up to [`GAP`] seconds, with at least
/// [`LEAST_FAILURES`] failing calls. A second whose calls were all refused by the
/// recording's breaker says nothing about the upstream: it neither ends an incident nor
/// counts toward its gap (so an outage behind a 30 s open period stays one incident,
/// from its first failure to its last); a second that ran healthy calls, or had no call
/// at all, does. Read from the recording alone, so the same for every setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Incident {
    /// Microseconds since the recording's start: the first failing call's start.
    pub(crate) start: u64,
    /// The last failing call's start.
    pub(crate) end: u64,
    pub(crate) failing_calls: u32,
}

/// A one-second bin is failing when at least this share of its calls failed.
pub(crate) const FAILING_SHARE: f64 = 0.25;
/// Failing bins this close (in seconds) are one incident.
pub(crate) const GAP: u64 = 5;
/// An incident has at least this many failing calls.
pub(crate) const LEAST_FAILURES: u32 = 5;

/// The incidents of a system's recorded calls (in start order).
pub(crate) fn incidents(calls: &[Call]) -> Vec<Incident> {
    let mut incidents: Vec<Incident> = Vec::new();
    let mut current: Option<Incident> = None;
    let mut last_failing_second: Option<u64> = None;
    // Seconds since the last failing one whose calls were all refused: no evidence.
    let mut unknown_seconds = 0;
    let mut i = 0;
    while i < calls.len() {
        let second = calls[i].start / 1_000_000;
        let mut j = i;
        let (mut failing, mut ran, mut first, mut last) = (0, 0, None, 0);
        while j < calls.len() && calls[j].start / 1_000_000 == second {
            if calls[j].outcome != Recorded::Rejected {
                ran += 1;
            }
            if calls[j].outcome.failing() {
                failing += 1;
                first.get_or_insert(calls[j].start);
                last = calls[j].start;
            }
            j += 1;
        }
        let share = f64::from(failing) / f64::from(ran.max(1));
        if ran == 0 {
            unknown_seconds += 1;
        } else if failing > 0 && share >= FAILING_SHARE {
            let joined = last_failing_second.is_some_and(|s| second - s - unknown_seconds <= GAP);
            if let (Some(incident), true) = (&mut current, joined) {
                incident.end = last;
                incident.failing_calls += failing;
            } else {
                if let Some(done) = current.take() {
                    incidents.push(done);
                }
                current = Some(Incident {
                    start: first.unwrap_or(calls[i].start),
                    end: last,
                    failing_calls: failing,
                });
            }
            last_failing_second = Some(second);
            unknown_seconds = 0;
        }
        i = j;
    }
    incidents.extend(current);
    incidents.retain(|i| i.failing_calls >= LEAST_FAILURES);
    incidents
}

/// An incident as one setting met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Met {
    pub(crate) incident: Incident,
    /// From the incident's first failure to the first call the breaker refused (µs),
    /// before the next incident starts.
    pub(crate) to_fast_fail: Option<u64>,
    /// Failing calls that reached the upstream from the incident's start to its end.
    pub(crate) failing_let_through: usize,
    /// Of those, the calls without a recorded outcome (answered failing by a guess).
    pub(crate) guessed: usize,
    /// Calls without a recorded outcome the breaker let run from the incident's start
    /// until it failed fast (or the next incident): their guessed answers fed it.
    pub(crate) guessed_before_fast_fail: usize,
}

/// Of a setting's figures, the calls without a recorded outcome (the recording's guard
/// refused them), answered by a guess.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Guessed {
    /// Such calls the replayed guard let run: their guessed answers fed its breaker.
    pub(crate) ran: usize,
    pub(crate) failing_let_through: usize,
    pub(crate) healthy_refused: usize,
    pub(crate) failing_refused: usize,
    pub(crate) bulkhead_refused: usize,
}

/// One system's figures under one setting, each call judged by its recorded outcome or,
/// for a call without one, by the answer it was given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Figures {
    pub(crate) calls: usize,
    /// Calls that reached the upstream.
    pub(crate) ran: usize,
    /// Failing calls (failure, slow, timeout) that reached the upstream.
    pub(crate) failing_let_through: usize,
    /// Healthy calls the breaker refused.
    pub(crate) healthy_refused: usize,
    /// Failing calls the breaker refused: spared the upstream.
    pub(crate) failing_refused: usize,
    /// Refused by the breaker, and cancelled by their caller in the recording.
    pub(crate) other_refused: usize,
    /// Refused by the bulkhead.
    pub(crate) bulkhead_refused: usize,
    /// How many of the calls behind each figure had no recorded outcome.
    pub(crate) guessed: Guessed,
    /// When (µs) and why the breaker opened.
    pub(crate) openings: Vec<(u64, String)>,
    pub(crate) incidents: Vec<Met>,
}

/// The figures of `replay` over `calls`, whose calls without a recorded outcome are
/// judged by `unknown` (one each, in order): the answer each was given where the
/// replayed guard let it run, and where it refused it, the one it is taken to have.
pub(crate) fn figures(
    calls: &[Call],
    replay: &Replay,
    incidents: &[Incident],
    unknown: &[Recorded],
) -> Figures {
    let whole = Span {
        calls: 0..calls.len(),
        transitions: 0..replay.transitions.len(),
    };
    figures_in(calls, replay, incidents, unknown, &whole)
}

/// A stretch of a replay: the calls that started in it, the transitions made in it.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub(crate) calls: std::ops::Range<usize>,
    pub(crate) transitions: std::ops::Range<usize>,
}

/// [`figures`] of the calls and transitions of `span` alone: each count over its calls,
/// and an incident's time to fast fail from the first call refused among them (`None`:
/// none was).
pub(crate) fn figures_in(
    calls: &[Call],
    replay: &Replay,
    incidents: &[Incident],
    unknown: &[Recorded],
    span: &Span,
) -> Figures {
    let mut f = Figures {
        calls: span.calls.len(),
        ..Figures::default()
    };
    let mut answers = unknown.iter();
    // Each call's outcome: recorded, or the answer it was given.
    let outcomes: Vec<Recorded> = calls
        .iter()
        .map(|c| {
            if c.outcome == Recorded::Rejected {
                answers.next().copied().unwrap_or(Recorded::Success)
            } else {
                c.outcome
            }
        })
        .collect();
    let (a, b) = (span.calls.start, span.calls.end);
    for ((call, fate), outcome) in calls[a..b]
        .iter()
        .zip(&replay.fates[a..b])
        .zip(&outcomes[a..b])
    {
        let unknown = usize::from(call.outcome == Recorded::Rejected);
        match fate {
            Fate::Ran | Fate::Pending => {
                f.ran += 1;
                f.guessed.ran += unknown;
                if outcome.failing() {
                    f.failing_let_through += 1;
                    f.guessed.failing_let_through += unknown;
                }
            }
            Fate::Refused => match outcome {
                Recorded::Success | Recorded::Rejected => {
                    f.healthy_refused += 1;
                    f.guessed.healthy_refused += unknown;
                }
                o if o.failing() => {
                    f.failing_refused += 1;
                    f.guessed.failing_refused += unknown;
                }
                _ => f.other_refused += 1,
            },
            Fate::BulkheadFull => {
                f.bulkhead_refused += 1;
                f.guessed.bulkhead_refused += unknown;
            }
        }
    }
    f.openings = replay.transitions[span.transitions.clone()]
        .iter()
        .filter(|t| t.to == State::Open || t.to == State::ForcedOpen)
        .map(|t| (t.at, t.why.clone()))
        .collect();
    f.incidents = incidents
        .iter()
        .enumerate()
        .map(|(i, incident)| {
            // Outcomes are judged when calls end: the breaker may act after the
            // incident's last failing start, up to the next incident.
            let until = incidents.get(i + 1).map_or(u64::MAX, |next| next.start);
            let from = calls
                .partition_point(|c| c.start < incident.start)
                .clamp(a, b);
            let to = calls
                .partition_point(|c| c.start <= incident.end)
                .clamp(a, b);
            let let_through: Vec<&Call> = calls[from..to]
                .iter()
                .zip(&outcomes[from..to])
                .zip(&replay.fates[from..to])
                .filter(|((_, o), f)| o.failing() && matches!(f, Fate::Ran | Fate::Pending))
                .map(|((c, _), _)| c)
                .collect();
            let failing_let_through = let_through.len();
            let guessed = let_through
                .iter()
                .filter(|c| c.outcome == Recorded::Rejected)
                .count();
            let first_refused = calls[from..b]
                .iter()
                .zip(&replay.fates[from..b])
                .position(|(_, f)| *f == Fate::Refused)
                .map(|p| from + p)
                .filter(|p| calls[*p].start < until);
            let to_fast_fail = first_refused.map(|p| calls[p].start - incident.start);
            // The guessed answers the breaker saw before it failed fast (or, if it never
            // did, before the next incident).
            let until_index = first_refused
                .unwrap_or_else(|| calls.partition_point(|c| c.start < until).clamp(from, b));
            let guessed_before_fast_fail = calls[from..until_index]
                .iter()
                .zip(&replay.fates[from..until_index])
                .filter(|(c, f)| {
                    c.outcome == Recorded::Rejected && matches!(f, Fate::Ran | Fate::Pending)
                })
                .count();
            Met {
                incident: *incident,
                to_fast_fail,
                failing_let_through,
                guessed,
                guessed_before_fast_fail,
            }
        })
        .collect();
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(second: f64, outcome: Recorded) -> Call {
        Call {
            start: (second * 1e6) as u64,
            duration: 0,
            outcome,
        }
    }

    #[test]
    fn incidents_are_failing_seconds_joined_across_short_gaps() {
        let mut calls = Vec::new();
        for i in 0..100 {
            let s = f64::from(i) * 0.5;
            let failing = (10.0..20.0).contains(&s) || (23.0..25.0).contains(&s) || s == 40.0;
            calls.push(call(
                s,
                if failing {
                    Recorded::Failure
                } else {
                    Recorded::Success
                },
            ));
        }
        let found = incidents(&calls);
        assert_eq!(
            found,
            [Incident {
                start: 10_000_000,
                end: 24_500_000,
                failing_calls: 24
            }]
        );
    }

    /// An outage behind a breaker with a 30 s open period: 10 calls a second; the
    /// first two seconds fail and open it, then each 30 s three trials fail and open it
    /// again, for three minutes, and the calls in between are refused (no outcome).
    /// The refused seconds say nothing about the upstream: they neither end the outage
    /// nor count as its gap, so it is one incident from the first failure to the last,
    /// as the upstream behaved, not one per trial (each too small to count).
    #[test]
    fn refused_seconds_do_not_cut_an_outage_into_pieces() {
        let mut calls = Vec::new();
        for tenth in 0..3_000_u32 {
            let s = f64::from(tenth) / 10.0;
            let failing_trial = (290..293).contains(&((tenth + 180) % 300));
            let outcome = if !(100..1_950).contains(&tenth) {
                Recorded::Success
            } else if tenth < 120 || failing_trial {
                Recorded::Failure
            } else {
                Recorded::Rejected
            };
            calls.push(call(s, outcome));
        }
        let found = incidents(&calls);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].start, 10_000_000);
        assert_eq!(found[0].end, 191_200_000, "the last failing trial");
        assert_eq!(found[0].failing_calls, 20 + 6 * 3);
        // A healthy stretch longer than the gap still ends an incident.
        let mut two = calls[..300].to_vec();
        for tenth in 0..200_u32 {
            let s = 30.0 + f64::from(tenth) / 10.0;
            let outcome = if (32.0..40.0).contains(&s) {
                Recorded::Success
            } else {
                Recorded::Failure
            };
            two.push(call(s, outcome));
        }
        assert_eq!(incidents(&two).len(), 2);
    }
}

/// The lowest and the highest a count came to over the ways of answering the calls
/// without a recorded outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Range {
    pub(crate) low: usize,
    pub(crate) high: usize,
}

impl Range {
    fn of(value: usize) -> Range {
        Range {
            low: value,
            high: value,
        }
    }

    fn widen(&mut self, value: usize) {
        self.low = self.low.min(value);
        self.high = self.high.max(value);
    }

    /// Whether `value` is within.
    #[cfg(test)]
    pub(crate) fn contains(self, value: usize) -> bool {
        (self.low..=self.high).contains(&value)
    }
}

/// The time to fast fail of an incident over those ways: the soonest, and the latest
/// (`None`: at least one never failed fast).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FastFailRange {
    pub(crate) soonest: Option<u64>,
    pub(crate) latest: Option<u64>,
}

impl FastFailRange {
    fn of(value: Option<u64>) -> FastFailRange {
        FastFailRange {
            soonest: value,
            latest: value,
        }
    }

    fn widen(&mut self, value: Option<u64>) {
        self.soonest = match (self.soonest, value) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.latest = self.latest.zip(value).map(|(a, b)| a.max(b));
    }

    /// Whether `value` (`None`: never) is within.
    #[cfg(test)]
    pub(crate) fn contains(self, value: Option<u64>) -> bool {
        match value {
            None => self.latest.is_none(),
            Some(t) => self.soonest.is_some_and(|s| s <= t) && self.latest.is_none_or(|l| t <= l),
        }
    }
}

/// How a setting's ranges were found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Proof {
    /// Replays whose figures the ranges hold (each way the calls that ran could have been
    /// answered, or as many as the budget allowed).
    pub(crate) paths: usize,
    /// Every way was replayed: each range holds the figure of every way of answering
    /// the calls without a recorded outcome.
    pub(crate) exhaustive: bool,
}

/// A setting's figures as ranges: each the lowest and highest over the replays of one
/// setting with the calls without a recorded outcome answered each way.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bounds {
    pub(crate) openings: Range,
    pub(crate) failing_let_through: Range,
    pub(crate) healthy_refused: Range,
    pub(crate) failing_refused: Range,
    pub(crate) bulkhead_refused: Range,
    /// Per incident: its time to fast fail, and its failing calls let through.
    pub(crate) incidents: Vec<(FastFailRange, Range)>,
    pub(crate) proof: Proof,
    /// Past the budget ([`Proof::exhaustive`] false): ranges that hold every way,
    /// proven without replaying each ([`possible`](super::possible)), wider than these.
    pub(crate) possible: Option<Box<Bounds>>,
}

impl Bounds {
    /// One replay's figures, each a range of one value.
    pub(crate) fn of(f: &Figures) -> Bounds {
        Bounds {
            openings: Range::of(f.openings.len()),
            failing_let_through: Range::of(f.failing_let_through),
            healthy_refused: Range::of(f.healthy_refused),
            failing_refused: Range::of(f.failing_refused),
            bulkhead_refused: Range::of(f.bulkhead_refused),
            incidents: f
                .incidents
                .iter()
                .map(|m| {
                    (
                        FastFailRange::of(m.to_fast_fail),
                        Range::of(m.failing_let_through),
                    )
                })
                .collect(),
            proof: Proof::default(),
            possible: None,
        }
    }

    /// Each range widened to hold `f`'s figure.
    pub(crate) fn widen(&mut self, f: &Figures) {
        self.openings.widen(f.openings.len());
        self.failing_let_through.widen(f.failing_let_through);
        self.healthy_refused.widen(f.healthy_refused);
        self.failing_refused.widen(f.failing_refused);
        self.bulkhead_refused.widen(f.bulkhead_refused);
        for ((fast, let_through), met) in self.incidents.iter_mut().zip(&f.incidents) {
            fast.widen(met.to_fast_fail);
            let_through.widen(met.failing_let_through);
        }
    }

    /// Whether every range holds the ranges of `other`.
    #[cfg(test)]
    pub(crate) fn contains_bounds(&self, other: &Bounds) -> bool {
        let within =
            |outer: Range, inner: Range| outer.low <= inner.low && inner.high <= outer.high;
        within(self.openings, other.openings)
            && within(self.failing_let_through, other.failing_let_through)
            && within(self.healthy_refused, other.healthy_refused)
            && within(self.failing_refused, other.failing_refused)
            && within(self.bulkhead_refused, other.bulkhead_refused)
            && self.incidents.iter().zip(&other.incidents).all(
                |((fast, through), (inner_fast, inner_through))| {
                    within(*through, *inner_through)
                        && fast.contains(inner_fast.soonest)
                        && fast.contains(inner_fast.latest)
                },
            )
    }

    /// Whether every range holds `f`'s figure.
    #[cfg(test)]
    pub(crate) fn contains(&self, f: &Figures) -> bool {
        self.openings.contains(f.openings.len())
            && self.failing_let_through.contains(f.failing_let_through)
            && self.healthy_refused.contains(f.healthy_refused)
            && self.failing_refused.contains(f.failing_refused)
            && self.bulkhead_refused.contains(f.bulkhead_refused)
            && self
                .incidents
                .iter()
                .zip(&f.incidents)
                .all(|((fast, let_through), met)| {
                    fast.contains(met.to_fast_fail) && let_through.contains(met.failing_let_through)
                })
    }
}
