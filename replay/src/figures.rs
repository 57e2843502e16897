//! What a replay means: the figures of one system under one setting, from the
//! recording's calls and the replayed guard's fate of each.

use outbound_guard::State;

use super::engine::{Fate, Replay};
use super::guess::Options;
use super::holes::{in_hole, Hole};
use super::recording::{Call, Recorded};
use super::transitions::BreakerTransition;

/// A stretch of the recording where the upstream was failing, by the upstream's own
/// behaviour: one-second bins where at least a quarter (`FAILING_SHARE`) of the
/// calls that reached it failed, joined across gaps up to 5 seconds (`GAP`), with at
/// least 5 failing calls (`LEAST_FAILURES`). A second whose calls were all refused by the
/// recording's breaker says nothing about the upstream: it neither ends an incident nor
/// counts toward its gap (so an outage behind a 30 s open period stays one incident,
/// from its first failure to its last), nor does a second without a call in one of the
/// recording's [holes](crate::Hole), where the calls that breaker refused are missing;
/// a second that ran healthy calls, or had no call at all elsewhere, does. Read from the
/// recording alone, so the same for every setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Incident {
    /// Microseconds since the recording's start: the first failing call's start.
    pub start: u64,
    /// The last failing call's start.
    pub end: u64,
    /// The failing calls in it.
    pub failing_calls: u32,
}

/// A one-second bin is failing when at least this share of its calls failed.
pub(crate) const FAILING_SHARE: f64 = 0.25;
/// Failing bins this close (in seconds) are one incident.
pub(crate) const GAP: u64 = 5;
/// An incident has at least this many failing calls.
pub(crate) const LEAST_FAILURES: u32 = 5;

/// The incidents of a system's recorded calls (in start order), which has `holes`.
pub(crate) fn incidents(calls: &[Call], holes: &[Hole]) -> Vec<Incident> {
    let mut incidents: Vec<Incident> = Vec::new();
    let mut current: Option<Incident> = None;
    let mut last_failing_second: Option<u64> = None;
    // Seconds since the last failing one whose calls were all refused, or that had
    // none in a hole: no evidence.
    let mut unknown_seconds = 0;
    let mut previous: Option<u64> = None;
    let mut i = 0;
    while i < calls.len() {
        let second = calls[i].start / 1_000_000;
        if let Some(p) = previous.filter(|_| !holes.is_empty()) {
            unknown_seconds += (p + 1..second).filter(|&s| in_hole(holes, s)).count() as u64;
        }
        previous = Some(second);
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
#[non_exhaustive]
pub struct IncidentMet {
    pub incident: Incident,
    /// From the incident's first failure to the first call the breaker refused (µs),
    /// before the next incident starts.
    pub to_fast_fail: Option<u64>,
    /// Failing calls that reached the upstream from the incident's start to its end.
    pub failing_let_through: usize,
    /// Of those, the calls without a recorded outcome (answered failing by a guess).
    pub guessed: usize,
    /// Calls without a recorded outcome the breaker let run from the incident's start
    /// until it failed fast (or the next incident): their guessed answers fed it.
    pub guessed_before_fast_fail: usize,
    /// Whether the breaker had not failed fast when the incident's first
    /// [hole](crate::Hole) began: what it did with the calls missing there is not
    /// recorded.
    pub unseen: bool,
}

/// What a replay counts of a setting, each the lower the better: the words of a row,
/// the key of its JSON, one variant each. A new figure is a new variant here and its
/// count in `figures_in`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Figure {
    /// Times the breaker opened (or was forced open).
    Openings,
    /// Failing calls (failure, slow, timeout) that reached the upstream.
    FailingLetThrough,
    /// Healthy calls the breaker refused.
    HealthyRefused,
    /// Failing calls the breaker refused: spared the upstream.
    FailingRefused,
    /// Refused by the breaker, and cancelled by their caller in the recording.
    CancelledRefused,
    /// Refused by the bulkhead.
    BulkheadRefused,
    /// How long callers waited on the calls that ran, in all (µs): each call's
    /// duration, cut at the setting's limit; a refused call answers at once.
    Waited,
}

impl Figure {
    /// Every figure, in the order shown.
    pub const ALL: [Figure; 7] = [
        Figure::Openings,
        Figure::FailingLetThrough,
        Figure::HealthyRefused,
        Figure::FailingRefused,
        Figure::CancelledRefused,
        Figure::BulkheadRefused,
        Figure::Waited,
    ];

    /// Its words: `failing calls let through`.
    pub fn label(self) -> &'static str {
        match self {
            Figure::Openings => "openings",
            Figure::FailingLetThrough => "failing calls let through",
            Figure::HealthyRefused => "healthy calls refused",
            Figure::FailingRefused => "failing calls refused",
            Figure::CancelledRefused => "cancelled calls refused",
            Figure::BulkheadRefused => "bulkhead refusals",
            Figure::Waited => "time callers waited",
        }
    }

    /// Its JSON key: `failing_let_through`.
    pub fn key(self) -> &'static str {
        match self {
            Figure::Openings => "openings",
            Figure::FailingLetThrough => "failing_let_through",
            Figure::HealthyRefused => "healthy_refused",
            Figure::FailingRefused => "failing_refused",
            Figure::CancelledRefused => "other_refused",
            Figure::BulkheadRefused => "bulkhead_refused",
            Figure::Waited => "waited_ms",
        }
    }

    /// Whether it is a time in microseconds (else a count).
    pub fn is_time(self) -> bool {
        self == Figure::Waited
    }
}

/// One value per [`Figure`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PerFigure<T>([T; Figure::ALL.len()]);

impl<T> std::ops::Index<Figure> for PerFigure<T> {
    type Output = T;
    fn index(&self, figure: Figure) -> &T {
        &self.0[figure as usize]
    }
}

impl<T> std::ops::IndexMut<Figure> for PerFigure<T> {
    fn index_mut(&mut self, figure: Figure) -> &mut T {
        &mut self.0[figure as usize]
    }
}

impl<T: Copy> PerFigure<T> {
    /// Each value through `f`.
    pub(crate) fn map<U>(self, mut f: impl FnMut(Figure, T) -> U) -> PerFigure<U> {
        let mut i = 0;
        PerFigure(self.0.map(|value| {
            let figure = Figure::ALL[i];
            i += 1;
            f(figure, value)
        }))
    }
}

/// One system's figures under one setting, each call judged by its recorded outcome or,
/// for a call without one, by the answer it was given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Figures {
    pub calls: usize,
    /// Calls that reached the upstream.
    pub ran: usize,
    /// Each figure.
    pub counts: PerFigure<usize>,
    /// Of the calls behind each figure, how many had no recorded outcome (for
    /// [`Figure::Openings`]: such calls let run, whose guessed answers fed the breaker).
    pub guessed: PerFigure<usize>,
    /// Of the calls without a recorded outcome that ran: how much longer or shorter
    /// their callers would have waited in all, had each been answered the other way
    /// (µs, each cut at the setting's limit; [`swing`]).
    pub swing: u64,
    pub openings: Vec<BreakerTransition>,
    pub incidents: Vec<IncidentMet>,
}

/// Over the calls without a recorded outcome that `replay` let run (`options`: theirs,
/// in order), the difference each one's two answers make to the time its caller
/// waited, each cut at `limit` (µs), added up: what guessing them wrong could add to
/// or take from [`Figure::Waited`] beside the calls it changes the fate of.
pub(crate) fn swing(calls: &[Call], replay: &Replay, options: &[Options], limit: u64) -> u64 {
    calls
        .iter()
        .zip(&replay.fates)
        .filter(|(c, _)| c.outcome == Recorded::Rejected)
        .zip(options)
        .filter(|((_, fate), _)| matches!(fate, Fate::Ran | Fate::Pending))
        .map(|(_, o)| {
            let wait = |answer: (Recorded, u32)| u64::from(answer.1).min(limit);
            wait(o.failing).abs_diff(wait(o.success))
        })
        .sum()
}

/// The figures of `replay` over `calls`, whose calls without a recorded outcome are
/// judged by `unknown` (one each, in order): the answer each was given where the
/// replayed guard let it run, and where it refused it, the one it is taken to have;
/// each call that ran waited its duration, cut at `limit` (µs).
pub(crate) fn figures(
    calls: &[Call],
    replay: &Replay,
    incidents: &[Incident],
    unknown: &[(Recorded, u32)],
    limit: u64,
) -> Figures {
    let whole = Span {
        calls: 0..calls.len(),
        transitions: 0..replay.transitions.len(),
    };
    figures_in(calls, replay, incidents, unknown, limit, &whole)
}

/// The longest a call that ran keeps its caller waiting under `settings` (µs): its
/// `read_timeout` or its `total_timeout`, the shorter.
pub(crate) fn limit(settings: &outbound_guard_settings::SystemSettings) -> u64 {
    let d = settings.read_timeout().min(settings.total_timeout());
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A stretch of a replay: the calls that started in it, the transitions made in it.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub calls: std::ops::Range<usize>,
    pub transitions: std::ops::Range<usize>,
}

/// The figure a call counts toward, by its fate and outcome: `None` for a call that ran
/// healthy.
fn counted_as(fate: Fate, outcome: Recorded) -> Option<Figure> {
    match fate {
        Fate::Ran | Fate::Pending => outcome.failing().then_some(Figure::FailingLetThrough),
        Fate::Refused => Some(match outcome {
            Recorded::Success | Recorded::Rejected => Figure::HealthyRefused,
            o if o.failing() => Figure::FailingRefused,
            _ => Figure::CancelledRefused,
        }),
        Fate::BulkheadFull => Some(Figure::BulkheadRefused),
    }
}

/// [`figures`] of the calls and transitions of `span` alone: each count over its calls,
/// and an incident's time to fast fail from the first call refused among them (`None`:
/// none was).
pub(crate) fn figures_in(
    calls: &[Call],
    replay: &Replay,
    incidents: &[Incident],
    unknown: &[(Recorded, u32)],
    limit: u64,
    span: &Span,
) -> Figures {
    let mut f = Figures {
        calls: span.calls.len(),
        ..Figures::default()
    };
    let mut answers = unknown.iter();
    // Each call's outcome and duration: recorded, or the answer it was given.
    let answered: Vec<(Recorded, u32)> = calls
        .iter()
        .map(|c| {
            if c.outcome == Recorded::Rejected {
                answers.next().copied().unwrap_or((Recorded::Success, 0))
            } else {
                (c.outcome, c.duration)
            }
        })
        .collect();
    let outcomes: Vec<Recorded> = answered.iter().map(|(o, _)| *o).collect();
    let (a, b) = (span.calls.start, span.calls.end);
    for ((call, fate), (outcome, duration)) in calls[a..b]
        .iter()
        .zip(&replay.fates[a..b])
        .zip(&answered[a..b])
    {
        let unknown = usize::from(call.outcome == Recorded::Rejected);
        if matches!(fate, Fate::Ran | Fate::Pending) {
            f.ran += 1;
            f.guessed[Figure::Openings] += unknown;
            f.counts[Figure::Waited] +=
                usize::try_from(u64::from(*duration).min(limit)).unwrap_or(usize::MAX);
            f.guessed[Figure::Waited] += unknown;
        }
        if let Some(figure) = counted_as(*fate, *outcome) {
            f.counts[figure] += 1;
            if figure != Figure::CancelledRefused {
                f.guessed[figure] += unknown;
            }
        }
    }
    f.openings = openings(calls, replay, span);
    f.counts[Figure::Openings] = f.openings.len();
    f.incidents = (0..incidents.len())
        .map(|i| met(calls, replay, &outcomes, incidents, i, a..b))
        .collect();
    f
}
/// The openings among `span`'s transitions, each marked where guessed answers fed it.
fn openings(calls: &[Call], replay: &Replay, span: &Span) -> Vec<BreakerTransition> {
    let mut since = 0;
    let mut out = Vec::new();
    for t in &replay.transitions[span.transitions.clone()] {
        if t.to == State::Closed {
            since = t.at;
        }
        if t.to != State::Open && t.to != State::ForcedOpen {
            continue;
        }
        let from = calls.partition_point(|c| c.start < since);
        let to = calls.partition_point(|c| c.start < t.at);
        // An operator's forced opening rests on no answer.
        let guessed = t.to == State::Open
            && calls[from..to]
                .iter()
                .zip(&replay.fates[from..to])
                .any(|(c, f)| {
                    c.outcome == Recorded::Rejected && matches!(f, Fate::Ran | Fate::Pending)
                });
        out.push(BreakerTransition {
            guessed,
            ..t.clone()
        });
    }
    out
}

/// Incident `i` as the replay met it, over the calls `within`.
fn met(
    calls: &[Call],
    replay: &Replay,
    outcomes: &[Recorded],
    incidents: &[Incident],
    i: usize,
    within: std::ops::Range<usize>,
) -> IncidentMet {
    let (a, b) = (within.start, within.end);
    let incident = incidents[i];
    let ran = |f: &Fate| matches!(f, Fate::Ran | Fate::Pending);
    // Outcomes are judged when calls end: the breaker may act after the incident's last
    // failing start, up to the next incident.
    let until = incidents.get(i + 1).map_or(u64::MAX, |next| next.start);
    let from = calls
        .partition_point(|c| c.start < incident.start)
        .clamp(a, b);
    let to = calls
        .partition_point(|c| c.start <= incident.end)
        .clamp(a, b);
    let let_through = || (from..to).filter(|&j| outcomes[j].failing() && ran(&replay.fates[j]));
    let failing_let_through = let_through().count();
    let guessed = let_through()
        .filter(|&j| calls[j].outcome == Recorded::Rejected)
        .count();
    let first_refused = (from..b)
        .find(|&j| replay.fates[j] == Fate::Refused)
        .filter(|&j| calls[j].start < until);
    let to_fast_fail = first_refused.map(|j| calls[j].start - incident.start);
    // The guessed answers the breaker saw before it failed fast (or, if it never did,
    // before the next incident).
    let until_index =
        first_refused.unwrap_or_else(|| calls.partition_point(|c| c.start < until).clamp(from, b));
    let guessed_before_fast_fail = (from..until_index)
        .filter(|&j| calls[j].outcome == Recorded::Rejected && ran(&replay.fates[j]))
        .count();
    IncidentMet {
        incident,
        to_fast_fail,
        failing_let_through,
        guessed,
        guessed_before_fast_fail,
        unseen: false,
    }
}

/// `f`'s incidents, replayed as `replay`, where the recording has `holes`: a breaker
/// open or half-open when an incident's first hole began refused the calls missing
/// there, so it failed fast when it opened; one that was closed let them run, unseen.
pub(crate) fn see_holes(f: &mut Figures, replay: &Replay, holes: &[Hole]) {
    for met in &mut f.incidents {
        let (start, end) = (met.incident.start, met.incident.end);
        let Some(hole) = holes.iter().find(|h| (start..=end).contains(&h.start)) else {
            continue;
        };
        if met.to_fast_fail.is_some_and(|t| start + t <= hole.start) {
            continue;
        }
        let before = || replay.transitions.iter().take_while(|t| t.at <= hole.start);
        if before().last().is_some_and(|t| t.to != State::Closed) {
            let opened = before()
                .filter(|t| matches!(t.to, State::Open | State::ForcedOpen))
                .last()
                .map_or(hole.start, |t| t.at);
            met.to_fast_fail = Some(opened.saturating_sub(start));
        } else {
            met.unseen = true;
        }
    }
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
        let found = incidents(&calls, &[]);
        assert_eq!(
            found,
            [Incident {
                start: 10_000_000,
                end: 24_500_000,
                failing_calls: 24
            }]
        );
    }

    /// The outage of the next two tests, its refused calls `rejected` (as the recorder
    /// writes them) or, as a log behind the breaker has it, missing.
    fn outage(refused_recorded: bool) -> Vec<Call> {
        let mut calls = Vec::new();
        for tenth in 0..3_000_u32 {
            let s = f64::from(tenth) / 10.0;
            let failing_trial = (290..293).contains(&((tenth + 180) % 300));
            let outcome = if !(100..1_950).contains(&tenth) {
                Recorded::Success
            } else if tenth < 120 || failing_trial {
                Recorded::Failure
            } else if refused_recorded {
                Recorded::Rejected
            } else {
                continue;
            };
            calls.push(call(s, outcome));
        }
        calls
    }

    /// An outage behind a breaker with a 30 s open period: 10 calls a second; the
    /// first two seconds fail and open it, then each 30 s three trials fail and open it
    /// again, for three minutes, and the calls in between are refused (no outcome).
    /// The refused seconds say nothing about the upstream: they neither end the outage
    /// nor count as its gap, so it is one incident from the first failure to the last,
    /// as the upstream behaved, not one per trial (each too small to count).
    #[test]
    fn refused_seconds_do_not_cut_an_outage_into_pieces() {
        let calls = outage(true);
        let found = incidents(&calls, &[]);
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
        assert_eq!(incidents(&two, &[]).len(), 2);
    }

    /// The same outage as a log behind that breaker writes it: the refused calls never
    /// reached the log. Its empty seconds are as silent as the refused ones where they
    /// lie in a hole: one incident again, as the upstream behaved; without the holes,
    /// it ends at the first empty stretch.
    #[test]
    fn empty_seconds_in_a_hole_do_not_cut_an_outage_into_pieces() {
        let calls = outage(false);
        let mut holes = Vec::new();
        for cycle in 0..6_u64 {
            let start = 12_000_000 + cycle * 30_000_000;
            holes.push(Hole {
                start,
                end: start + 29_900_000,
                rate_before: 10.0,
                rate_during: 0.1,
            });
        }
        // Without them: cut at the first empty 30 s, each cycle's three failing trials
        // too few to count on their own.
        let alone = incidents(&calls, &[]);
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert_eq!(alone[0].end, 11_900_000, "{alone:?}");
        let found = incidents(&calls, &holes);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].start, found[0].end), (10_000_000, 191_200_000));
    }

    /// In an incident with a hole, a breaker open when the hole began failed fast when
    /// it opened (the calls it refused are the ones missing); one that had not failed
    /// fast by then is unseen; one that failed fast before it keeps its time.
    #[test]
    fn a_hole_tells_when_an_open_breaker_failed_fast_and_hides_a_closed_one() {
        use crate::transitions::BreakerTransition;
        let incident = Incident {
            start: 1_000_000,
            end: 9_000_000,
            failing_calls: 40,
        };
        let hole = Hole {
            start: 2_000_000,
            end: 8_000_000,
            rate_before: 50.0,
            rate_during: 0.5,
        };
        let replay = |opened: Option<u64>| Replay {
            fates: Vec::new(),
            transitions: opened
                .map(|at| BreakerTransition {
                    at,
                    from: State::Closed,
                    to: State::Open,
                    open: None,
                    why: String::new(),
                    guessed: false,
                })
                .into_iter()
                .collect(),
            asked: Vec::new(),
            decisions: 0,
            times: Vec::new(),
            calls: Vec::new(),
            limits: Vec::new(),
        };
        let met = |to_fast_fail: Option<u64>| IncidentMet {
            incident,
            to_fast_fail,
            failing_let_through: 0,
            guessed: 0,
            guessed_before_fast_fail: 0,
            unseen: false,
        };
        let seen = |opened: Option<u64>, to_fast_fail: Option<u64>| {
            let mut f = Figures {
                incidents: vec![met(to_fast_fail)],
                ..Figures::default()
            };
            see_holes(&mut f, &replay(opened), &[hole]);
            (f.incidents[0].to_fast_fail, f.incidents[0].unseen)
        };
        // Opened at the hole's start, no call refused in the log until its trials.
        assert_eq!(seen(Some(2_000_000), None), (Some(1_000_000), false));
        assert_eq!(
            seen(Some(2_000_000), Some(7_000_000)),
            (Some(1_000_000), false)
        );
        // Failed fast before the hole: as replayed.
        assert_eq!(seen(Some(1_500_000), Some(600_000)), (Some(600_000), false));
        // Closed when the hole began: what it met there is not recorded.
        assert_eq!(seen(None, None), (None, true));
        assert!(seen(Some(2_500_000), Some(1_600_000)).1);
    }
}

/// The lowest and the highest a count came to over the ways of answering the calls
/// without a recorded outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Range {
    pub low: usize,
    pub high: usize,
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
    pub soonest: Option<u64>,
    pub latest: Option<u64>,
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

/// A setting's figures as ranges over the ways of answering the calls without a
/// recorded outcome that were replayed: each figure's range, and each incident's (its
/// time to fast fail and its failing calls let through).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ranges {
    pub figures: PerFigure<Range>,
    pub incidents: Vec<(FastFailRange, Range)>,
    /// Replays whose figures the ranges hold (each way the calls that ran could have been
    /// answered, or as many as the budget allowed).
    pub paths: usize,
    /// Every way was replayed: each range holds the figure of every way of answering
    /// the calls without a recorded outcome.
    pub every_way: bool,
}

impl Ranges {
    /// One replay's figures, each a range of one value.
    pub(crate) fn of(f: &Figures) -> Ranges {
        Ranges {
            figures: f.counts.map(|_, value| Range::of(value)),
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
            paths: 0,
            every_way: false,
        }
    }

    /// The ranges where they hold every way of answering (every way was replayed);
    /// `None` past the budget, where only the estimate is known.
    pub(crate) fn proven(&self) -> Option<&Ranges> {
        self.every_way.then_some(self)
    }

    /// Each range widened to hold `f`'s figure.
    pub(crate) fn widen(&mut self, f: &Figures) {
        for figure in Figure::ALL {
            self.figures[figure].widen(f.counts[figure]);
        }
        for ((fast, let_through), met) in self.incidents.iter_mut().zip(&f.incidents) {
            fast.widen(met.to_fast_fail);
            let_through.widen(met.failing_let_through);
        }
    }

    /// Whether every range holds `f`'s figure.
    #[cfg(test)]
    pub(crate) fn contains(&self, f: &Figures) -> bool {
        Figure::ALL
            .iter()
            .all(|&figure| self.figures[figure].contains(f.counts[figure]))
            && self
                .incidents
                .iter()
                .zip(&f.incidents)
                .all(|((fast, let_through), met)| {
                    fast.contains(met.to_fast_fail) && let_through.contains(met.failing_let_through)
                })
    }
}
