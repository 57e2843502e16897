//! The objectives a person states (`--healthy-refused 0.1%`, `--fail-fast-within 20s`,
//! `--failing-through N`), and how one setting's replay meets each: met, missed, or
//! cannot tell, as sure as the figure and the cap it rests on (a share of healthy calls
//! is a share of the healthy calls the estimate counts, with its error).

use std::time::Duration;

use crate::figures::Figure as FigureKind;
use crate::guess::options;
use crate::prepared::Certainty;
use crate::recording::{Call, Recorded};
use crate::verdict::{Known, Told, ESTIMATE_ERROR};

/// The objectives, as the command line states them.
#[derive(Debug, Clone, Copy)]
pub struct Objectives {
    /// The largest share of the recording's healthy calls the breaker may refuse.
    pub healthy_refused: f64,
    /// How soon every incident must fail fast (one over sooner meets it).
    pub fail_fast_within: Duration,
    /// The most failing calls let through, if capped.
    pub failing_through: Option<u64>,
}

/// Whether a setting meets an objective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meets {
    /// Met on every way the recording allows: exact, or the whole of the figure's
    /// interval within the whole of the cap's.
    Met,
    /// Missed the same way: the whole interval past the cap.
    Missed,
    /// The interval spans the cap, or the recording cannot tell the figure: why.
    /// Counted as not met: a setting is never said to meet an objective nobody knows
    /// it meets.
    CannotTell(String),
    /// Nothing in the recording to judge it by, for any setting (no incident to fail
    /// fast in): why. Counted as met, and said so.
    NotJudged(String),
}

impl Meets {
    /// Whether it is met (or nothing judges it).
    pub fn met(&self) -> bool {
        matches!(self, Meets::Met | Meets::NotJudged(_))
    }
}

/// A cap as far as the recording tells it: the estimate, and the interval it lies in
/// (equal for an exact one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    pub value: u64,
    pub low: u64,
    pub high: u64,
}

impl Cap {
    /// A cap known exactly.
    pub(crate) fn exact(value: u64) -> Cap {
        Cap {
            value,
            low: value,
            high: value,
        }
    }
}

/// `value ≤ cap` over `known`'s interval and the cap's: met only where the figure's
/// highest is within the cap's lowest, missed only where its lowest is past the cap's
/// highest.
fn within(known: &Known, cap: Cap) -> Meets {
    match known {
        Known::CannotTell(why) => Meets::CannotTell(why.clone()),
        Known::Told(t) if t.high <= cap.low => Meets::Met,
        Known::Told(t) if t.low > cap.high => Meets::Missed,
        Known::Told(t) => Meets::CannotTell(format!(
            "its interval ({} to {}) spans the cap ({})",
            t.low,
            t.high,
            if cap.low == cap.high {
                cap.low.to_string()
            } else {
                format!("{} to {}", cap.low, cap.high)
            }
        )),
    }
}

impl Objectives {
    /// One setting's replay (`judge`) against these objectives; `healthy` is the
    /// recording's healthy calls as far as it tells them, `calls` all of them.
    pub(crate) fn score(self, judge: &Certainty<'_>, (healthy, calls): (Told, usize)) -> Scorecard {
        score(judge, self, (healthy, calls))
    }
}

impl crate::recording::SystemRecording {
    /// The recording's healthy calls and its failing calls, each as far as it tells
    /// them: the calls it recorded so, and of those its guard refused, the ones the
    /// estimate answers so, within the estimate's error.
    pub fn totals(&self) -> (Told, Told) {
        totals(&self.calls)
    }
}

/// The healthy calls `share` allows refusing of `healthy` (an estimate's interval
/// gives the cap's).
pub(crate) fn healthy_cap(share: f64, healthy: Told) -> Cap {
    let of = |n: u64| (share * n as f64).floor() as u64;
    Cap {
        value: of(healthy.value),
        low: of(healthy.low),
        high: of(healthy.high),
    }
}

/// The recording's healthy calls and its failing calls, each as far as it tells them:
/// the calls it recorded so, and of those its guard refused, the ones the estimate
/// answers so (the guessed answers every replay of it is fed), within the estimate's
/// error of the guessed answers ([`ESTIMATE_ERROR`]), and never beyond all of them.
pub(crate) fn totals(calls: &[Call]) -> (Told, Told) {
    let unknown = options(calls);
    let guessed_failing = unknown.iter().filter(|o| o.estimate_fails).count() as u64;
    let n = unknown.len() as u64;
    let err = (ESTIMATE_ERROR * n as f64).ceil() as u64;
    let of = |recorded: usize, guessed: u64| {
        let recorded = recorded as u64;
        let value = recorded + guessed;
        Told {
            value,
            low: value.saturating_sub(err).max(recorded),
            high: (value + err).min(recorded + n),
            guessed: unknown.len(),
        }
    };
    let healthy = calls
        .iter()
        .filter(|c| c.outcome == Recorded::Success)
        .count();
    let failing = calls.iter().filter(|c| c.outcome.failing()).count();
    (
        of(healthy, n - guessed_failing),
        of(failing, guessed_failing),
    )
}

/// What one setting's replay gives each objective, and its figures for ranking.
#[derive(Debug, Clone)]
pub(crate) struct Scorecard {
    pub meets: [Meets; 3],
    /// Whether each objective's estimate meets it (whatever its interval): what ranks
    /// the settings none of whose objectives are all known met.
    pub estimate_meets: [bool; 3],
    /// The figures of the front, as far as the recording tells them: healthy calls
    /// refused, failing calls let through, and the longest any incident went before it
    /// failed fast or ended (µs).
    pub known: [Known; 3],
    /// The same, each its estimate, or where it cannot be told its worst (every call of
    /// the recording; an incident's whole length): what a setting is ranked by.
    pub front: [u64; 3],
    /// Bulkhead refusals and the time callers waited in all (µs), their estimates.
    pub bulkhead_refused: u64,
    pub waited: u64,
}

impl Scorecard {
    /// The objectives not known met.
    pub(crate) fn missed(&self) -> usize {
        self.meets.iter().filter(|m| !m.met()).count()
    }

    /// The objectives the estimate misses.
    pub(crate) fn estimate_missed(&self) -> usize {
        self.estimate_meets.iter().filter(|m| !**m).count()
    }

    /// Calls decided wrong: failing calls let through, healthy calls and bulkhead
    /// refusals refused.
    pub(crate) fn wrong(&self) -> u64 {
        self.front[0]
            .saturating_add(self.front[1])
            .saturating_add(self.bulkhead_refused)
    }
}

/// A figure's estimate, or `worst` where it cannot be told.
fn value(known: &Known, worst: u64) -> u64 {
    match known {
        Known::Told(t) => t.value,
        Known::CannotTell(_) => worst,
    }
}

/// The longest any incident went before it failed fast or ended, from each one's time
/// to fast fail and length; `None` without an incident.
fn slowest(incidents: &[(Known, u64)]) -> Option<Known> {
    let mut out: Option<Told> = None;
    for (known, length) in incidents {
        let Known::Told(t) = known else {
            return Some(known.clone());
        };
        let cut = Told {
            value: t.value.min(*length),
            low: t.low.min(*length),
            high: t.high.min(*length),
            guessed: t.guessed,
        };
        out = Some(out.map_or(cut, |o| Told {
            value: o.value.max(cut.value),
            low: o.low.max(cut.low),
            high: o.high.max(cut.high),
            guessed: o.guessed + cut.guessed,
        }));
    }
    out.map(Known::Told)
}

/// One setting's replay against `objectives`; `healthy` is the recording's healthy
/// calls as far as it tells them, `calls` all of them.
pub(crate) fn score(
    judge: &Certainty<'_>,
    objectives: Objectives,
    (healthy, calls): (Told, usize),
) -> Scorecard {
    let healthy_refused = judge.figure(FigureKind::HealthyRefused);
    let failing = judge.figure(FigureKind::FailingLetThrough);
    let within_us = u64::try_from(objectives.fail_fast_within.as_micros()).unwrap_or(u64::MAX);
    let incidents: Vec<(Known, u64)> = judge
        .incident_lengths()
        .enumerate()
        .map(|(i, length)| (judge.fast_fail(i), length))
        .collect();
    let mut fast = if incidents.is_empty() {
        Meets::NotJudged("the recording has no incident to fail fast in".to_owned())
    } else {
        Meets::Met
    };
    let mut fast_estimate = true;
    for (known, length) in &incidents {
        // An incident over sooner than the objective meets it.
        let meets = if *length <= within_us {
            Meets::Met
        } else {
            fast_estimate &= value(known, u64::MAX) <= within_us;
            within(known, Cap::exact(within_us))
        };
        fast = worse(fast, meets);
    }
    let longest = incidents.iter().map(|(_, l)| *l).max().unwrap_or(0);
    let slowest = slowest(&incidents).unwrap_or(Known::Told(Told {
        value: 0,
        low: 0,
        high: 0,
        guessed: 0,
    }));
    let calls = calls as u64;
    let cap = healthy_cap(objectives.healthy_refused, healthy);
    let failing_cap = objectives.failing_through.unwrap_or(u64::MAX);
    Scorecard {
        meets: [
            within(&healthy_refused, cap),
            fast,
            objectives
                .failing_through
                .map_or(Meets::Met, |cap| within(&failing, Cap::exact(cap))),
        ],
        estimate_meets: [
            value(&healthy_refused, calls) <= cap.value,
            fast_estimate,
            value(&failing, calls) <= failing_cap,
        ],
        front: [
            value(&healthy_refused, calls),
            value(&failing, calls),
            value(&slowest, longest),
        ],
        known: [healthy_refused, failing, slowest],
        bulkhead_refused: value(&judge.figure(FigureKind::BulkheadRefused), calls),
        waited: value(&judge.figure(FigureKind::Waited), u64::MAX),
    }
}

/// Of two incidents' answers, the one that holds for both.
fn worse(a: Meets, b: Meets) -> Meets {
    let rank = |m: &Meets| match m {
        Meets::Met | Meets::NotJudged(_) => 0,
        Meets::CannotTell(_) => 1,
        Meets::Missed => 2,
    };
    if rank(&b) > rank(&a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::told;

    #[test]
    fn the_slowest_incident_is_cut_at_its_length_and_unknown_if_one_is() {
        let never = told(u64::MAX, u64::MAX, u64::MAX);
        let Some(Known::Told(t)) = slowest(&[(told(300, 200, 400), 1_000), (never, 700)]) else {
            panic!("told")
        };
        assert_eq!((t.value, t.low, t.high), (700, 700, 700));
        let unknown = Known::CannotTell("x".into());
        assert!(matches!(
            slowest(&[(told(1, 1, 1), 10), (unknown, 10)]),
            Some(Known::CannotTell(_))
        ));
        assert!(slowest(&[]).is_none());
    }

    #[test]
    fn a_cap_is_met_or_missed_only_by_the_whole_interval() {
        let five = Cap::exact(5);
        assert_eq!(within(&told(5, 5, 5), five), Meets::Met);
        assert_eq!(within(&told(6, 6, 6), five), Meets::Missed);
        assert!(matches!(within(&told(4, 2, 8), five), Meets::CannotTell(_)));
        assert!(matches!(within(&told(7, 2, 8), five), Meets::CannotTell(_)));
        assert!(matches!(
            within(&Known::CannotTell("x".into()), five),
            Meets::CannotTell(_)
        ));
        // The cap's own interval counts: met only under its lowest, missed only over
        // its highest.
        let cap = Cap {
            value: 10,
            low: 8,
            high: 12,
        };
        assert_eq!(within(&told(8, 8, 8), cap), Meets::Met);
        assert!(matches!(within(&told(9, 9, 9), cap), Meets::CannotTell(_)));
        assert!(matches!(
            within(&told(12, 12, 12), cap),
            Meets::CannotTell(_)
        ));
        assert_eq!(within(&told(13, 13, 13), cap), Meets::Missed);
    }

    fn healthy(value: u64, low: u64, high: u64) -> Told {
        Told {
            value,
            low,
            high,
            guessed: usize::from(low != high),
        }
    }

    #[test]
    fn the_healthy_cap_is_a_share_of_the_healthy_calls_and_their_interval() {
        assert_eq!(
            healthy_cap(0.001, healthy(5_400, 5_400, 5_400)),
            Cap::exact(5)
        );
        assert_eq!(
            healthy_cap(0.0, healthy(5_400, 5_400, 5_400)),
            Cap::exact(0)
        );
        assert_eq!(healthy_cap(1.0, healthy(10, 10, 10)), Cap::exact(10));
        assert_eq!(
            healthy_cap(0.2, healthy(6_838, 4_838, 8_838)),
            Cap {
                value: 1_367,
                low: 967,
                high: 1_767
            }
        );
    }

    /// A call of the tests' recordings: `outcome` at `ms`.
    fn call(ms: u64, outcome: Recorded) -> Call {
        Call {
            start: ms * 1_000,
            duration: 5_000,
            outcome,
        }
    }

    #[test]
    fn the_totals_count_the_refused_calls_as_the_estimate_answers_them() {
        // 20 healthy, 10 refused, 10 failing: the refused calls' gap runs from healthy
        // to failing, so the estimate answers about half of them failing.
        let mut calls: Vec<Call> = (0..20).map(|n| call(n, Recorded::Success)).collect();
        calls.extend((20..30).map(|n| call(n, Recorded::Rejected)));
        calls.extend((30..40).map(|n| call(n, Recorded::Failure)));
        let (healthy, failing) = totals(&calls);
        assert_eq!(healthy.value + failing.value, 40);
        assert!((23..=27).contains(&healthy.value), "{healthy:?}");
        // Half of the 10 guessed either way, within the recorded and all of them.
        assert_eq!(healthy.high - healthy.value, 5);
        assert_eq!(healthy.value - healthy.low, 5);
        assert!(healthy.low >= 20 && failing.high <= 20);
        // Every outcome recorded: exact.
        let observed: Vec<Call> = (0..10).map(|n| call(n, Recorded::Success)).collect();
        let (healthy, failing) = totals(&observed);
        assert_eq!((healthy.low, healthy.high, failing.value), (10, 10, 0));
    }

    #[test]
    fn the_worst_answer_of_the_incidents_holds() {
        assert_eq!(worse(Meets::Met, Meets::Missed), Meets::Missed);
        assert_eq!(
            worse(Meets::CannotTell(String::new()), Meets::Met),
            Meets::CannotTell(String::new())
        );
        assert!(!worse(Meets::Met, Meets::CannotTell(String::new())).met());
    }
}
