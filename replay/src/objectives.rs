//! The objectives a person states (`--healthy-refused 0.1%`, `--fail-fast-within 20s`,
//! `--failing-through N`; a team's test: "fails fast within 1 s in every incident",
//! "refuses at most 10 healthy calls"), and how one setting's replay meets each: met,
//! missed, or cannot tell, as sure as the figure and the cap it rests on (a share of
//! healthy calls is a share of the healthy calls the estimate counts, with its error).
//! `tune`'s search and a team's test ([`Prepared::fails_fast_within`],
//! [`Prepared::refuses_at_most`]) are judged by the same two rules: a figure meets a
//! cap only with the whole of its interval, and an incident over sooner than the time
//! to fail fast meets it.

use std::fmt;
use std::time::Duration;

use crate::figures::Figure as FigureKind;
use crate::guess::options;
use crate::prepared::{Certainty, Prepared};
use crate::recording::{Call, Recorded};
use crate::report::Variant;
use crate::verdict::{Known, Told, ESTIMATE_ERROR};
use crate::words::{span, thousands};

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

/// Whether a setting meets an objective. Its [`Display`](fmt::Display) is `met`, or
/// the why it holds: [`Prepared::fails_fast_within`] and [`Prepared::refuses_at_most`]
/// say it in the screen's words (`sber fails fast in incident 1 after 413 ms, not
/// within 100 ms`), so that a team's `assert_eq!` fails with the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meets {
    /// Met on every way the recording allows: exact, or the whole of the figure's
    /// interval within the whole of the cap's.
    Met,
    /// Missed the same way: the whole interval past the cap. How.
    Missed(String),
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

impl fmt::Display for Meets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Meets::Met => f.write_str("met"),
            Meets::Missed(why) | Meets::CannotTell(why) | Meets::NotJudged(why) => f.write_str(why),
        }
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
    let cap_words = || {
        if cap.low == cap.high {
            cap.low.to_string()
        } else {
            format!("{} to {}", cap.low, cap.high)
        }
    };
    match known {
        Known::CannotTell(why) => Meets::CannotTell(why.clone()),
        Known::Told(t) if t.high <= cap.low => Meets::Met,
        Known::Told(t) if t.low > cap.high => Meets::Missed(format!(
            "its interval ({} to {}) is past the cap ({})",
            t.low,
            t.high,
            cap_words()
        )),
        Known::Told(t) => Meets::CannotTell(format!(
            "its interval ({} to {}) spans the cap ({})",
            t.low,
            t.high,
            cap_words()
        )),
    }
}

/// An incident's time to fast fail (`known`) against `within_us`: an incident over
/// sooner than that (`length`) meets it, whatever its breaker did.
fn fails_fast_in(known: &Known, length: u64, within_us: u64) -> Meets {
    if length <= within_us {
        Meets::Met
    } else {
        within(known, Cap::exact(within_us))
    }
}

/// A duration in µs, `u64::MAX` past it.
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Prepared<'_> {
    /// Whether `variant` fails fast within `within` in every incident of the recording
    /// (one over sooner meets it): met, missed or cannot tell as `tune` judges its
    /// `--fail-fast-within`, each incident's time to fast fail as far as the recording
    /// tells it (an estimate meets it only with the whole of its interval). The worst
    /// incident's answer holds, said in the screen's words: `sber fails fast in
    /// incident 1 after 413 ms, not within 100 ms`; `cannot tell whether sber fails fast
    /// within 1.0 s in incident 2: ≈900 ms, between 500 ms and 1.4 s`. A recording
    /// without an incident does not judge it ([`Meets::NotJudged`]).
    pub fn fails_fast_within(&self, variant: &Variant, within: Duration) -> Meets {
        let (name, within_us) = (&self.name, micros(within));
        if self.incidents.is_empty() {
            return Meets::NotJudged(format!(
                "the recording has no incident of {name} to fail fast in"
            ));
        }
        let judge = self.certainty(variant);
        let mut answer = Meets::Met;
        for (i, length) in judge.incident_lengths().enumerate() {
            let known = judge.fast_fail(i);
            let n = i + 1;
            let worded = match (fails_fast_in(&known, length, within_us), known) {
                (Meets::Met, _) => Meets::Met,
                (Meets::Missed(_), Known::Told(t)) if t.value == u64::MAX => {
                    Meets::Missed(format!(
                        "{name} never fails fast in incident {n}, not within {}",
                        span(within_us)
                    ))
                }
                (Meets::Missed(_), Known::Told(t)) => Meets::Missed(format!(
                    "{name} fails fast in incident {n} {}, not within {}",
                    after(t),
                    span(within_us)
                )),
                (_, Known::Told(t)) => Meets::CannotTell(format!(
                    "cannot tell whether {name} fails fast within {} in incident {n}: {}",
                    span(within_us),
                    between(t, true)
                )),
                (_, Known::CannotTell(why)) => Meets::CannotTell(format!(
                    "cannot tell whether {name} fails fast in incident {n}: {why}"
                )),
            };
            answer = worse(answer, worded);
        }
        answer
    }

    /// Whether `variant` refuses at most `most` healthy calls over the recording: met,
    /// missed or cannot tell as `tune` judges its `--healthy-refused` cap, the figure
    /// as far as the recording tells it (an estimate meets it only with the whole of
    /// its interval), said in the screen's words: `sber refuses ≈1,226 ±383 healthy
    /// calls, more than 500`; `cannot tell whether sber refuses at most 1,000 healthy
    /// calls: ≈1,226, between 843 and 1,526`.
    pub fn refuses_at_most(&self, variant: &Variant, most: u64) -> Meets {
        let name = &self.name;
        let known = self.certainty(variant).figure(FigureKind::HealthyRefused);
        match (within(&known, Cap::exact(most)), known) {
            (Meets::Met, _) => Meets::Met,
            (Meets::Missed(_), Known::Told(t)) => Meets::Missed(format!(
                "{name} refuses {} healthy calls, more than {}",
                count(t),
                thousands(most)
            )),
            (_, Known::Told(t)) => Meets::CannotTell(format!(
                "cannot tell whether {name} refuses at most {} healthy calls: {}",
                thousands(most),
                between(t, false)
            )),
            (_, Known::CannotTell(why)) => Meets::CannotTell(format!(
                "cannot tell how many healthy calls {name} refuses: {why}"
            )),
        }
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

/// A count as the screen says it: `40` exact, `≈1,226 ±383` estimated (the error the
/// farther end of its interval).
pub(crate) fn count(t: Told) -> String {
    if t.exact() {
        thousands(t.value)
    } else {
        let err = t.value.abs_diff(t.low).max(t.high.abs_diff(t.value));
        format!("≈{} ±{}", thousands(t.value), thousands(err))
    }
}

/// A time to fast fail as the screen says it: `after 413 ms`, `after ≈2.5 s` (one
/// that is never is said by its sentence).
pub(crate) fn after(t: Told) -> String {
    if t.exact() {
        format!("after {}", span(t.value))
    } else {
        format!("after ≈{}", span(t.value))
    }
}

/// An estimate and its interval: `≈1,226, between 843 and 1,526`, or of a time
/// (`time`) `≈900 ms, between 500 ms and 1.4 s`.
pub(crate) fn between(t: Told, time: bool) -> String {
    let words = |v: u64| match v {
        u64::MAX => "never".to_owned(),
        v if time => span(v),
        v => thousands(v),
    };
    format!(
        "≈{}, between {} and {}",
        words(t.value),
        words(t.low),
        words(t.high)
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
    let within_us = micros(objectives.fail_fast_within);
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
        if *length > within_us {
            fast_estimate &= value(known, u64::MAX) <= within_us;
        }
        fast = worse(fast, fails_fast_in(known, *length, within_us));
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
        Meets::Missed(_) => 2,
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
    use crate::verdict::{told, Subject};

    fn estimate(value: u64, low: u64, high: u64) -> Told {
        Told {
            value,
            low,
            high,
            guessed: usize::from(low != high),
        }
    }

    #[test]
    fn a_teams_figures_read_as_the_screen_says_them() {
        assert_eq!(count(estimate(40, 40, 40)), "40");
        assert_eq!(count(estimate(1_226, 843, 1_526)), "≈1,226 ±383");
        assert_eq!(after(estimate(413_000, 413_000, 413_000)), "after 413 ms");
        assert_eq!(
            after(estimate(900_000, 500_000, 1_400_000)),
            "after ≈900 ms"
        );
        assert_eq!(
            between(estimate(1_226, 843, 1_526), false),
            "≈1,226, between 843 and 1,526"
        );
        assert_eq!(
            between(estimate(900_000, 500_000, u64::MAX), true),
            "≈900 ms, between 500 ms and never"
        );
    }

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
        assert!(matches!(within(&told(6, 6, 6), five), Meets::Missed(_)));
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
        assert!(matches!(within(&told(13, 13, 13), cap), Meets::Missed(_)));
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

    /// `sber`'s recording of `outcomes` (`s` success, `f` failure), one call every
    /// 100 ms, each answered in 5 ms: every outcome recorded.
    fn recording(outcomes: &str) -> crate::recording::Recording {
        use std::fmt::Write as _;
        let mut lines = String::new();
        for (i, o) in outcomes.chars().enumerate() {
            let outcome = if o == 's' { "success" } else { "failure" };
            let start = 1_796_395_656_000.0 + i as f64 * 100.0;
            writeln!(
                lines,
                "{{\"system\":\"sber\",\"start\":{start},\"duration_ms\":5.0,\"outcome\":\"{outcome}\"}}"
            )
            .unwrap();
        }
        crate::recording::Recording::read(lines.as_bytes(), true).unwrap()
    }

    fn settings(text: &str) -> outbound_guard_settings::SystemSettings {
        let file = format!("[systems.sber]\n{text}\n");
        let parsed = outbound_guard_settings::Settings::parse(&file, "resilience.toml").unwrap();
        parsed.system("sber").unwrap().clone()
    }

    #[test]
    fn a_teams_time_to_fail_fast_is_met_missed_or_not_judged_in_the_screens_words() {
        // 30 s healthy, then 30 s of failures: one incident, 29.9 s long.
        let recorded = recording(&("s".repeat(300) + &"f".repeat(300)));
        let mut prepared = Prepared::new("sber", &recorded.systems["sber"], None);
        let as_set = prepared.ran_with("as set", &settings("cb_failure_rate = 0.5"));
        let Known::Told(t) = prepared.known(&as_set, Subject::FastFail(0)) else {
            panic!("every outcome is recorded")
        };
        assert!(t.exact() && t.value < 10_000_000, "{t:?}");
        let at = Duration::from_micros(t.value);
        assert_eq!(prepared.fails_fast_within(&as_set, at), Meets::Met);
        let sooner = at - Duration::from_millis(1);
        assert_eq!(
            prepared.fails_fast_within(&as_set, sooner),
            Meets::Missed(format!(
                "sber fails fast in incident 1 after {}, not within {}",
                span(t.value),
                span(t.value - 1_000)
            ))
        );
        // Two calls of five failing: a breaker opening at half never fails fast, but
        // an incident over sooner than the objective (29.6 s) meets it.
        let recorded = recording(&("s".repeat(300) + &"ffsss".repeat(60)));
        let mut prepared = Prepared::new("sber", &recorded.systems["sber"], None);
        let as_set = prepared.ran_with("as set", &settings("cb_failure_rate = 0.5"));
        assert_eq!(
            prepared.fails_fast_within(&as_set, Duration::from_secs(10)),
            Meets::Missed("sber never fails fast in incident 1, not within 10.0 s".to_owned())
        );
        assert_eq!(
            prepared.fails_fast_within(&as_set, Duration::from_secs(30)),
            Meets::Met
        );
        // Nothing to fail fast in.
        let healthy = recording(&"s".repeat(100));
        let mut prepared = Prepared::new("sber", &healthy.systems["sber"], None);
        let as_set = prepared.ran_with("as set", &settings(""));
        let none = prepared.fails_fast_within(&as_set, Duration::from_secs(1));
        assert_eq!(
            none.to_string(),
            "the recording has no incident of sber to fail fast in"
        );
        assert!(none.met());
    }

    #[test]
    fn a_teams_cap_on_healthy_calls_refused_is_met_only_at_or_over_the_count() {
        // 10 s of failures, then 50 s healthy: the breaker opens early and refuses
        // healthy calls while it is open.
        let recorded = recording(&("f".repeat(100) + &"s".repeat(500)));
        let mut prepared = Prepared::new("sber", &recorded.systems["sber"], None);
        let as_set = prepared.ran_with("as set", &settings("cb_failure_rate = 0.5"));
        let figure = Subject::Figure(FigureKind::HealthyRefused);
        let Known::Told(t) = prepared.known(&as_set, figure) else {
            panic!("every outcome is recorded")
        };
        assert!(t.exact() && t.value > 100, "{t:?}");
        assert_eq!(prepared.refuses_at_most(&as_set, t.value), Meets::Met);
        assert_eq!(
            prepared.refuses_at_most(&as_set, t.value - 1).to_string(),
            format!(
                "sber refuses {} healthy calls, more than {}",
                thousands(t.value),
                thousands(t.value - 1)
            )
        );
    }

    #[test]
    fn the_worst_answer_of_the_incidents_holds() {
        let missed = Meets::Missed(String::new());
        assert_eq!(worse(Meets::Met, missed.clone()), missed);
        assert_eq!(worse(missed.clone(), Meets::Met), missed);
        // Of two alike, the first holds: the first incident missed is the one said.
        let (one, two) = (Meets::Missed("1".into()), Meets::Missed("2".into()));
        assert_eq!(worse(one.clone(), two), one);
        assert_eq!(
            worse(Meets::CannotTell(String::new()), Meets::Met),
            Meets::CannotTell(String::new())
        );
        assert!(!worse(Meets::Met, Meets::CannotTell(String::new())).met());
    }
}
