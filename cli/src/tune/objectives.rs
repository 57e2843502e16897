//! The objectives a person states (`--healthy-refused 0.1%`, `--fail-fast-within 20s`,
//! `--failing-through N`), and how one setting's replay meets each: met, missed, or
//! not known, as sure as the figure it rests on.

use std::time::Duration;

use crate::replay::{FigureKind, Judge, Known, Told};

/// The objectives, as the command line states them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Objectives {
    /// The largest share of the recording's healthy calls the breaker may refuse.
    pub(crate) healthy_refused: f64,
    /// How soon every incident must fail fast (one over sooner meets it).
    pub(crate) fail_fast_within: Duration,
    /// The most failing calls let through, if capped.
    pub(crate) failing_through: Option<u64>,
}

/// One objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Objective {
    HealthyRefused,
    FailFast,
    FailingThrough,
}

impl Objective {
    pub(crate) const ALL: [Objective; 3] = [
        Objective::HealthyRefused,
        Objective::FailFast,
        Objective::FailingThrough,
    ];

    /// Its JSON key.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Objective::HealthyRefused => "healthy_refused",
            Objective::FailFast => "fail_fast_within",
            Objective::FailingThrough => "failing_through",
        }
    }
}

/// Whether a setting meets an objective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Meets {
    /// Met on every way the recording allows (exact, or the estimate's whole interval).
    Yes,
    /// Missed the same way.
    No,
    /// The estimate meets it, or misses it, but its interval spans the cap.
    Likely(bool),
    /// The recording cannot tell the figure it rests on: why. Counted as missed: a
    /// setting is never recommended on a figure nobody knows.
    Unknown(String),
    /// Nothing in the recording to judge it by, for any setting (no incident to fail
    /// fast in): why. Counted as met, and said so.
    NotJudged(String),
}

impl Meets {
    /// Whether the estimate meets it.
    pub(crate) fn by_estimate(&self) -> bool {
        matches!(self, Meets::Yes | Meets::Likely(true) | Meets::NotJudged(_))
    }
}

/// `value ≤ cap` over `known`'s interval.
fn within(known: &Known, cap: u64) -> Meets {
    match known {
        Known::CannotTell(why) => Meets::Unknown(why.clone()),
        Known::Told(t) if t.high <= cap => Meets::Yes,
        Known::Told(t) if t.low > cap => Meets::No,
        Known::Told(t) => Meets::Likely(t.value <= cap),
    }
}

/// The healthy calls `share` allows refusing of `healthy`.
pub(crate) fn healthy_cap(share: f64, healthy: usize) -> u64 {
    (share * healthy as f64).floor() as u64
}

/// What one setting's replay gives each objective, and its figures for ranking.
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    pub(crate) meets: [Meets; 3],
    /// The figures of the front, as far as the recording tells them: healthy calls
    /// refused, failing calls let through, and the longest any incident went before it
    /// failed fast or ended (µs).
    pub(crate) known: [Known; 3],
    /// The same, each its estimate, or where it cannot be told its worst (every call of
    /// the recording; an incident's whole length): what a setting is ranked by.
    pub(crate) front: [u64; 3],
    /// Bulkhead refusals and the time callers waited in all (µs), their estimates.
    pub(crate) bulkhead_refused: u64,
    pub(crate) waited: u64,
}

impl Judged {
    /// The objectives the estimate misses.
    pub(crate) fn missed(&self) -> usize {
        self.meets.iter().filter(|m| !m.by_estimate()).count()
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
/// calls, `calls` all of them.
pub(crate) fn judge(
    judge: &Judge<'_>,
    objectives: Objectives,
    (healthy, calls): (usize, usize),
) -> Judged {
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
        Meets::Yes
    };
    for (known, length) in &incidents {
        // An incident over sooner than the objective meets it.
        let meets = if *length <= within_us {
            Meets::Yes
        } else {
            within(known, within_us)
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
    Judged {
        meets: [
            within(
                &healthy_refused,
                healthy_cap(objectives.healthy_refused, healthy),
            ),
            fast,
            objectives
                .failing_through
                .map_or(Meets::Yes, |cap| within(&failing, cap)),
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
        Meets::Yes | Meets::NotJudged(_) => 0,
        Meets::Likely(true) => 1,
        Meets::Likely(false) => 2,
        Meets::Unknown(_) => 3,
        Meets::No => 4,
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
    use crate::replay::told;

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
    fn a_cap_is_met_missed_or_likely_as_the_interval_lies() {
        assert_eq!(within(&told(5, 5, 5), 5), Meets::Yes);
        assert_eq!(within(&told(6, 6, 6), 5), Meets::No);
        assert_eq!(within(&told(4, 2, 8), 5), Meets::Likely(true));
        assert_eq!(within(&told(7, 2, 8), 5), Meets::Likely(false));
        assert!(matches!(
            within(&Known::CannotTell("x".into()), 5),
            Meets::Unknown(_)
        ));
    }

    #[test]
    fn the_healthy_cap_is_a_share_of_the_healthy_calls() {
        assert_eq!(healthy_cap(0.001, 5_400), 5);
        assert_eq!(healthy_cap(0.0, 5_400), 0);
        assert_eq!(healthy_cap(1.0, 10), 10);
    }

    #[test]
    fn the_worst_answer_of_the_incidents_holds() {
        assert_eq!(worse(Meets::Yes, Meets::No), Meets::No);
        assert_eq!(
            worse(Meets::Likely(false), Meets::Yes),
            Meets::Likely(false)
        );
        assert!(!worse(Meets::Yes, Meets::Likely(false)).by_estimate());
    }
}
