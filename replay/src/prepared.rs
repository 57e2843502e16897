//! The engine's front door: one system's recording prepared once (its operator's
//! actions, its calls without a recorded outcome and the draws of their answers, its
//! incidents and its holes), then replayed through any setting ([`Prepared::variant`])
//! into the figures a report renders, each as far as the recording tells it
//! ([`Certainty`]). `replay` and `tune` both come in here. How a setting is replayed
//! every way within the budget, and on each draw, is [`ways`](super::ways)' part of its
//! methods.

use std::sync::Arc;

use outbound_guard_settings::SystemSettings;

use super::figures::{self, incidents, Figure as FigureKind};
use super::report::{SystemReport, Variant};
use super::verdict::{self, Known};
use super::{guess, holes, knowable, recording};

/// The seed of the draws of the answers a recording lacks: the same replay draws the
/// same.
const DRAWS_SEED: u64 = 0x0DE5_EED5;

/// Replayed calls that the default budget's walk spends on one setting, about.
const DEFAULT_CALLS: usize = 500_000;
/// The default budget's most replays.
const DEFAULT_MOST: usize = 1024;

/// How many replays of a setting may be spent on its ranges: `asked`, or as many as
/// make about half a million replayed calls of `calls` (at least 2, at most 1024).
pub(crate) fn budget(asked: Option<usize>, calls: usize) -> usize {
    asked
        .unwrap_or_else(|| (DEFAULT_CALLS / calls.max(1)).clamp(2, DEFAULT_MOST))
        .max(1)
}

/// One system's recording, ready to be replayed through any setting: its operator's
/// actions, its calls without a recorded outcome, its incidents and its holes. Shared
/// by the threads of `tune`.
pub struct Prepared<'a> {
    pub(crate) name: String,
    pub(crate) system: &'a recording::SystemRecording,
    pub(crate) actions: Vec<(u64, outbound_guard::ManualAction)>,
    pub(crate) read_limit: Option<std::time::Duration>,
    // The calls without a recorded outcome: the estimate answers them from the evidence
    // on both sides of their gap, and the ranges hold every way they could have been
    // answered (`ways`).
    pub(crate) options: Arc<[guess::Options]>,
    // Draws of their answers, each setting replayed on every one (paired: the n-th of
    // each setting on the same answers); none where every call has its outcome, or
    // unless asked for (`with_draws`).
    pub(crate) draws: Arc<[Vec<bool>]>,
    pub(crate) budget: usize,
    pub(crate) incidents: Vec<figures::Incident>,
    pub(crate) holes: Vec<holes::Hole>,
}

impl<'a> Prepared<'a> {
    /// How many draws of the answers a recording lacks `replay` replays each setting on
    /// ([`Prepared::with_draws`]): a difference told where every draw agrees on its sign
    /// holds with a confidence of [`Compared::CONFIDENCE`](crate::Compared::CONFIDENCE).
    pub const DRAWS: usize = verdict::DRAWS;

    /// `system`'s recording of `name`, its incidents found as if it had no hole (until
    /// [`ran_with`](Self::ran_with) finds them).
    pub fn new(
        name: &str,
        system: &'a recording::SystemRecording,
        max_replays: Option<usize>,
    ) -> Prepared<'a> {
        Prepared {
            name: name.to_owned(),
            system,
            actions: system.actions.clone(),
            read_limit: knowable::read_limit(system),
            options: guess::options(&system.calls).into(),
            draws: Vec::new().into(),
            budget: budget(max_replays, system.calls.len()),
            incidents: incidents(&system.calls, &[]),
            holes: Vec::new(),
        }
    }

    /// Replays every setting also on `n` draws of the answers its recording lacks
    /// (`guess::draws`), the same draws for each, so that two settings compare on the
    /// same answers ([`Variant::paired`]; `replay` draws [`Prepared::DRAWS`]). Without it
    /// (0), a comparison is interval against interval ([`Known::compare`]).
    #[must_use]
    pub fn with_draws(mut self, n: usize) -> Self {
        self.draws = if self.options.is_empty() {
            Vec::new().into()
        } else {
            guess::draws(&self.system.calls, n, DRAWS_SEED).into()
        };
        self
    }

    /// The failing calls of the recording on each draw of the answers it lacks (those
    /// recorded failing, and those the draw answers so): what no breaker at all lets
    /// through on that draw. Empty where nothing is drawn.
    pub fn failing_drawn(&self) -> Vec<u64> {
        let recorded = self
            .system
            .calls
            .iter()
            .filter(|c| c.outcome.failing())
            .count() as u64;
        self.draws
            .iter()
            .map(|d| recorded + d.iter().filter(|&&f| f).count() as u64)
            .collect()
    }

    /// The settings the service ran with, replayed: where its traffic fell while this
    /// breaker was open (`holes`), the incidents are found again around the holes and
    /// it is replayed again with them. Call it first: every [`variant`](Self::variant)
    /// after it is judged with these incidents and holes.
    pub fn ran_with(&mut self, label: &str, settings: &SystemSettings) -> Variant {
        let mut first = self.variant(label, settings);
        first.ran_with = true;
        self.holes = holes::holes(&self.system.calls, &first.replay);
        if self.holes.is_empty() {
            return first;
        }
        self.incidents = incidents(&self.system.calls, &self.holes);
        let mut again = self.variant(label, settings);
        again.ran_with = true;
        again
    }

    /// The recording through `settings`, labelled `label`. Where the recording has
    /// holes, the figures they leave out cannot be told, and no range holds.
    pub fn variant(&self, label: &str, settings: &SystemSettings) -> Variant {
        let calls = &self.system.calls;
        let mut v = self.assess(settings, self.budget);
        v.figures.swing = figures::swing(calls, &v.replay, &self.options, figures::limit(settings));
        v.cannot_tell = knowable::cannot_tell(self.system, settings);
        if !self.draws.is_empty() && v.cannot_tell.is_empty() {
            v.draws = self.drawn(settings, &v.replay, &self.draws, &self.holes);
        }
        if !self.holes.is_empty() {
            figures::see_holes(&mut v.figures, &v.replay, &self.holes);
            // No way of answering the calls it has fills the holes: no range holds.
            v.ranges.every_way = false;
        }
        label.clone_into(&mut v.label);
        v.reach = reach(calls, settings);
        v
    }

    /// Its incidents, found from the upstream's behaviour: each one's start (µs since
    /// the recording's) and length.
    pub fn incidents(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.incidents.iter().map(|i| (i.start, i.end - i.start))
    }

    /// Its calls.
    pub fn calls(&self) -> usize {
        self.system.calls.len()
    }

    /// Its calls without a recorded outcome (refused by the recording's guard).
    pub fn unknown(&self) -> usize {
        self.options.len()
    }

    /// Whether its traffic fell while the breaker it ran with was open.
    pub fn has_holes(&self) -> bool {
        !self.holes.is_empty()
    }

    /// What the recording tells of `variant`'s `subject` (a figure over the whole
    /// recording, or an incident's time to fast fail): its value and how sure that is,
    /// or why it cannot be told.
    pub fn known(&self, variant: &Variant, subject: verdict::Subject) -> Known {
        verdict::known_in(self.system.calls.len(), self.has_holes(), variant, subject)
    }

    /// How sure each figure of `variant` of it is.
    pub(crate) fn certainty<'p>(&'p self, variant: &'p Variant) -> Certainty<'p> {
        Certainty {
            prepared: self,
            variant,
        }
    }

    /// The report of `variants` of it, the settings it ran with first.
    pub fn report(self, variants: Vec<Variant>) -> SystemReport<'a> {
        SystemReport {
            name: self.name,
            recording: self.system,
            incidents: self.incidents,
            holes: self.holes,
            unknown: self.options.len(),
            filled: 0,
            variants,
        }
    }
}

/// A setting's figures as far as its recording tells them.
pub(crate) struct Certainty<'p> {
    prepared: &'p Prepared<'p>,
    variant: &'p Variant,
}

impl Certainty<'_> {
    fn known(&self, subject: verdict::Subject) -> Known {
        let p = self.prepared;
        verdict::known_in(p.system.calls.len(), p.has_holes(), self.variant, subject)
    }

    /// A figure over the whole recording.
    pub(crate) fn figure(&self, figure: FigureKind) -> Known {
        self.known(verdict::Subject::Figure(figure))
    }

    /// Incident `i`'s time to fast fail (µs; `u64::MAX`: never).
    pub(crate) fn fast_fail(&self, i: usize) -> Known {
        self.known(verdict::Subject::FastFail(i))
    }

    /// Each incident's length (µs), in order.
    pub(crate) fn incident_lengths(&self) -> impl Iterator<Item = u64> + '_ {
        self.prepared.incidents().map(|(_, length)| length)
    }
}

/// The calls `calls` make at their mean rate over one open period of `settings`.
fn reach(calls: &[recording::Call], settings: &SystemSettings) -> u64 {
    let span = calls.last().map_or(0, |c| c.start).max(1);
    let open = u64::try_from(settings.cb_open_duration().as_micros()).unwrap_or(u64::MAX);
    let calls = u64::try_from(calls.len()).unwrap_or(u64::MAX);
    u64::try_from(u128::from(calls) * u128::from(open) / u128::from(span)).unwrap_or(u64::MAX)
}
