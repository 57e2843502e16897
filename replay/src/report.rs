//! What a replay found, per system and setting, as the screens read it: the figures,
//! their ranges and the replay of each setting; and the words of times and spans.

use std::ops::RangeInclusive;
use std::time::{Duration, SystemTime};

use outbound_guard_settings::SystemSettings;

use super::engine::Replay;
use super::figures::{Figure as FigureKind, Figures, Incident, IncidentMet, Ranges};
use super::holes::Hole;
use super::recording::{Recording, SystemRecording};
use super::transitions::BreakerTransition;

/// One setting's replay of one system.
#[non_exhaustive]
pub struct Variant {
    /// `as set`, or the changed key: `cb_failure_rate=0.2`.
    pub label: String,
    /// Whether these are the settings the recording's guard ran with: where the
    /// recording has holes, the failing calls they let through are all in it.
    pub ran_with: bool,
    /// With the calls without a recorded outcome answered by the estimate.
    pub(crate) figures: Figures,
    /// Its figures on each draw of those answers (`DRAWS`),
    /// in the order drawn, the same for every setting (empty where none is guessed).
    pub(crate) draws: Vec<Figures>,
    /// Each figure over every way of answering them.
    pub(crate) ranges: Ranges,
    pub replay: Replay,
    /// The longest a call that ran keeps its caller waiting (µs): the setting's
    /// `read_timeout` or `total_timeout`, the shorter.
    pub limit: u64,
    /// The calls the recording makes, at its mean rate, over one of this setting's open
    /// periods: how many calls an opening decided by guessed answers may move between
    /// running and refused.
    pub reach: u64,
    /// Replays made of this setting (the estimate's, and each way of answering).
    pub replays: usize,
    /// Why the recording cannot tell this setting (its figures are then not given);
    /// empty when it can.
    pub cannot_tell: Vec<String>,
}

impl Variant {
    /// `settings`' replay with the estimate's answers (`replay`, its `figures`), its
    /// `ranges` over the `replays` made: unlabelled, without draws, cannot tell
    /// nothing; [`Prepared::variant`](super::Prepared::variant) fills in the rest.
    pub(crate) fn assessed(
        settings: &SystemSettings,
        replay: Replay,
        figures: Figures,
        ranges: Ranges,
        replays: usize,
    ) -> Variant {
        Variant {
            label: String::new(),
            ran_with: false,
            figures,
            draws: Vec::new(),
            ranges,
            replay,
            limit: super::figures::limit(settings),
            reach: 0,
            replays,
            cannot_tell: Vec::new(),
        }
    }

    /// The calls its figures count (none where the recording cannot tell it).
    pub fn calls(&self) -> usize {
        self.figures.calls
    }

    /// Of those, the calls that reached the upstream.
    pub fn ran(&self) -> usize {
        self.figures.ran
    }

    /// Of the calls behind `figure`'s count, how many had no recorded outcome (for the
    /// openings: such calls let run, whose guessed answers fed the breaker).
    pub fn guessed(&self, figure: FigureKind) -> usize {
        self.figures.guessed[figure]
    }

    /// Its count of `figure` on each draw of the answers the recording lacks, in the
    /// order drawn (none where nothing was drawn).
    pub fn drawn_counts(&self, figure: FigureKind) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.draws.iter().map(move |d| d.counts[figure])
    }

    /// When and why its breaker opened (or was forced open), in order, each marked
    /// where guessed answers fed it ([`BreakerTransition::guessed`]).
    pub fn openings(&self) -> &[BreakerTransition] {
        &self.figures.openings
    }

    /// How it met each of the recording's incidents, in order.
    pub fn incidents(&self) -> &[IncidentMet] {
        &self.figures.incidents
    }

    /// How many replays of it the ranges hold (each way the calls without a recorded
    /// outcome could have been answered, or as many as the budget allowed).
    pub fn ways_replayed(&self) -> usize {
        self.ranges.paths
    }

    /// Whether every way of answering the calls without a recorded outcome was
    /// replayed: then the `proven` ranges hold.
    pub fn every_way(&self) -> bool {
        self.ranges.every_way
    }

    /// The lowest to the highest `figure` came to over every way of answering the
    /// calls without a recorded outcome; `None` unless [every way](Self::every_way)
    /// was replayed.
    pub fn proven(&self, figure: FigureKind) -> Option<RangeInclusive<usize>> {
        let r = self.ranges.proven()?.figures[figure];
        Some(r.low..=r.high)
    }

    /// The same for incident `i`'s time to fast fail: the soonest to the latest (µs;
    /// `u64::MAX`: it never failed fast, as a [`Told`](crate::Told)'s).
    pub fn proven_fast_fail(&self, i: usize) -> Option<RangeInclusive<u64>> {
        let (fast, _) = self.ranges.proven()?.incidents.get(i)?;
        let never = |t: Option<u64>| t.unwrap_or(u64::MAX);
        Some(never(fast.soonest)..=never(fast.latest))
    }

    /// The same for the failing calls it let through in incident `i`.
    pub fn proven_through(&self, i: usize) -> Option<RangeInclusive<usize>> {
        let (_, through) = self.ranges.proven()?.incidents.get(i)?;
        Some(through.low..=through.high)
    }

    /// Drops each call's fate: what is kept (figures, transitions) is what `tune` reads
    /// of the many settings it tries, and a million calls' fates each would add up.
    pub(crate) fn forget_fates(&mut self) {
        self.replay.fates = Vec::new();
        self.replay.asked = Vec::new();
    }
}

/// One system's replays.
#[non_exhaustive]
pub struct SystemReport<'a> {
    pub name: String,
    pub recording: &'a SystemRecording,
    pub incidents: Vec<Incident>,
    /// Where its traffic fell while the breaker it ran with was open.
    pub holes: Vec<Hole>,
    /// Its calls without a recorded outcome (refused by the recording's guard).
    pub unknown: usize,
    /// Its calls without a recorded outcome that another replica's calls answered
    /// (`--replica`): no longer without one.
    pub filled: usize,
    pub variants: Vec<Variant>,
}

impl SystemReport<'_> {
    /// Whether an opening at `at` (µs) rests on what the holes hide: it came during a
    /// hole, or later in an incident in which a hole began (the calls missing there
    /// would have fed the breaker first).
    pub fn rests_on_holes(&self, at: u64) -> bool {
        self.holes.iter().any(|h| {
            h.start <= at
                && (at <= h.end
                    || self.incidents.iter().any(|i| {
                        (i.start..=i.end).contains(&h.start) && (i.start..=i.end).contains(&at)
                    }))
        })
    }
}

impl Recording {
    /// A time of the recording (µs since its start) as a time of day, to the millisecond:
    /// `2026-03-02 14:05:11.250 UTC`.
    pub fn when(&self, at: u64) -> String {
        let origin = self.origin.unwrap_or(SystemTime::UNIX_EPOCH);
        let text = humantime::format_rfc3339_millis(origin + Duration::from_micros(at)).to_string();
        text.replace('T', " ").trim_end_matches('Z').to_owned() + " UTC"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_rests_on_the_holes_in_one_or_later_in_its_incident() {
        let recording = SystemRecording::default();
        let hole = |start, end| Hole {
            start,
            end,
            rate_before: 100.0,
            rate_during: 0.0,
        };
        let report = SystemReport {
            name: "s".into(),
            recording: &recording,
            incidents: vec![Incident {
                start: 10,
                end: 100,
                failing_calls: 50,
            }],
            holes: vec![hole(20, 30), hole(200, 210)],
            unknown: 0,
            filled: 0,
            variants: Vec::new(),
        };
        // Before the first hole: what the recording holds decided it.
        assert!(!report.rests_on_holes(15));
        // In a hole, and later in the incident the hole began in.
        assert!(report.rests_on_holes(25));
        assert!(report.rests_on_holes(90));
        // After the incident, outside any hole: no longer.
        assert!(!report.rests_on_holes(150));
        // In a hole outside every incident.
        assert!(report.rests_on_holes(205));
        assert!(!report.rests_on_holes(215));
    }
}
