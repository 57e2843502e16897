//! The search: from the settings the service ran with, every setting one key (or one
//! group of keys) away is replayed, then the same around the best found and around
//! each setting on the front of the trade-offs, until none is left to try, the budget
//! (`--max-settings`) is spent, or the user interrupts it. Each batch is replayed on
//! every thread asked for (`--jobs`), each replay on its own paused runtime.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use outbound_guard_settings::SystemSettings;

use super::objectives::{score, Meets, Objectives, Scorecard};
use super::space::{label, text_of, Base, Change, Group, Seen};
use crate::prepared::Prepared;
use crate::report::Variant;
use crate::verdict::{Known, Told};

/// One setting tried.
#[non_exhaustive]
pub struct Candidate {
    /// The keys changed from the settings the service ran with.
    pub change: Change,
    pub settings: SystemSettings,
    pub variant: Variant,
    pub(crate) judged: Scorecard,
}

impl Candidate {
    /// The settings no other tried is better than on every figure of the front, in rank
    /// order; the first of equal ones.
    pub fn front(tried: &[Candidate]) -> Vec<usize> {
        front(tried)
    }

    /// The change tried in words: `cb_failure_rate=0.6, cb_open_duration=5s`; `as set`
    /// if none.
    pub fn label(&self) -> String {
        label(&self.change)
    }

    /// What it gives each objective, in the order of [`Objectives`]' fields: healthy
    /// calls refused, the time to fail fast, failing calls let through.
    pub fn meets(&self) -> &[Meets; 3] {
        &self.judged.meets
    }

    /// The objectives not known met.
    pub fn missed(&self) -> usize {
        self.judged.missed()
    }

    /// Healthy calls refused, failing calls let through, and the longest any incident
    /// went before it failed fast or ended (µs), as far as the recording tells them.
    pub fn known(&self) -> &[Known; 3] {
        &self.judged.known
    }

    /// The same three, each its estimate, or where it cannot be told its worst (every
    /// call of the recording; an incident's whole length): what it is ranked by.
    pub fn estimates(&self) -> [u64; 3] {
        self.judged.front
    }

    /// The time callers waited in all (µs), its estimate; `u64::MAX` where it cannot be
    /// told.
    pub fn waited(&self) -> u64 {
        self.judged.waited
    }

    /// How it ranks, the lower the better (a key to sort the tried by): by the
    /// objectives not known met, then those its estimate misses, the calls it decides
    /// wrong, the time callers waited, and the keys it changes.
    pub fn rank(&self) -> impl Ord + Copy {
        let j = &self.judged;
        (
            j.missed(),
            j.estimate_missed(),
            j.wrong(),
            j.waited,
            self.change.len(),
        )
    }
}

/// What the search of every system shares.
pub struct Search<'a> {
    /// The settings file's text, from which every setting tried is made.
    pub text: &'a str,
    /// Its name, for its errors.
    pub origin: &'a str,
    /// `--env`'s overrides (`CLIENT_<SYSTEM>__<KEY>`), each setting tried made through
    /// them.
    pub vars: &'a [(String, String)],
    pub objectives: Objectives,
    pub jobs: usize,
    pub most: usize,
    /// Set when the user interrupts: the search ends after the replays running.
    pub stop: &'a AtomicBool,
    /// Called once for each setting tried.
    pub progress: &'a (dyn Fn() + Sync),
}

impl Search<'_> {
    /// `prepared`'s system (`name`) searched from the settings it ran with
    /// (`ran_with`, whose replay is `first`); `healthy` is its healthy calls as far as
    /// the recording tells them. Returns every setting tried, the one it ran with at 0
    /// (the only one where the recording has holes: no count of any setting can be
    /// told there), whether the search was interrupted, and the keys it searched.
    pub fn run(
        &self,
        prepared: &Prepared<'_>,
        (name, ran_with): (&str, &SystemSettings),
        mut first: Variant,
        healthy: Told,
    ) -> (Vec<Candidate>, bool, Vec<&'static str>) {
        let groups = Seen::of(&prepared.system.calls).groups(ran_with);
        let judged = self
            .objectives
            .score(&prepared.certainty(&first), (healthy, prepared.calls()));
        first.forget_fates();
        let first = Candidate {
            change: Change::new(),
            settings: ran_with.clone(),
            variant: first,
            judged,
        };
        (self.progress)();
        let (tried, interrupted) = if prepared.has_holes() {
            (vec![first], false)
        } else {
            let search = SystemSearch {
                search: self,
                prepared,
                system: name,
                groups: &groups,
                healthy,
            };
            search.run(first)
        };
        let mut keys: Vec<&'static str> = groups
            .iter()
            .flat_map(|g| g.keys.iter().map(|k| k.name()))
            .collect();
        keys.dedup();
        (tried, interrupted, keys)
    }

    /// The settings file with the overrides, from which every setting tried is made.
    fn base(&self) -> Base<'_> {
        Base {
            text: self.text,
            origin: self.origin,
            vars: self.vars,
        }
    }
}

/// One system's search.
pub(crate) struct SystemSearch<'a> {
    pub search: &'a Search<'a>,
    pub prepared: &'a Prepared<'a>,
    pub system: &'a str,
    pub groups: &'a [Group],
    /// The recording's healthy calls, as far as it tells them.
    pub healthy: Told,
}

/// Whether `a` is at least as good as `b` on every figure of the front and better on
/// one.
fn dominates(a: &Scorecard, b: &Scorecard) -> bool {
    let (a, b) = (a.front, b.front);
    a.iter().zip(&b).all(|(x, y)| x <= y) && a != b
}

/// The settings no other tried is better than on every figure of the front, in rank
/// order; the first of equal ones.
pub(crate) fn front(tried: &[Candidate]) -> Vec<usize> {
    let mut front: Vec<usize> = (0..tried.len())
        .filter(|&i| {
            !tried.iter().enumerate().any(|(j, t)| {
                dominates(&t.judged, &tried[i].judged)
                    || (j < i && t.judged.front == tried[i].judged.front)
            })
        })
        .collect();
    front.sort_by_key(|&i| tried[i].rank());
    front
}

impl SystemSearch<'_> {
    /// The setting `change` makes, tried: its replay, judged.
    fn try_one(&self, change: Change, settings: SystemSettings) -> Candidate {
        let mut variant = self.prepared.variant(&label(&change), &settings);
        let judged = score(
            &self.prepared.certainty(&variant),
            self.search.objectives,
            (self.healthy, self.prepared.calls()),
        );
        variant.forget_fates();
        Candidate {
            change,
            settings,
            variant,
            judged,
        }
    }

    /// Each of `batch` tried, on every thread; the ones left when interrupted are not.
    /// A setting the recording cannot tell (a longer timeout than its calls were
    /// allowed) comes back among the second: nothing is known of it.
    fn try_all(
        &self,
        batch: Vec<(Change, SystemSettings)>,
    ) -> (Vec<Candidate>, Vec<SystemSettings>) {
        let slots: Vec<Mutex<Option<(Change, SystemSettings)>>> =
            batch.into_iter().map(|b| Mutex::new(Some(b))).collect();
        let done: Mutex<Vec<(usize, Candidate)>> = Mutex::new(Vec::new());
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..self.search.jobs.min(slots.len()) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= slots.len() || self.search.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Some((change, settings)) = slots[i].lock().ok().and_then(|mut s| s.take())
                    else {
                        continue;
                    };
                    let tried = self.try_one(change, settings);
                    (self.search.progress)();
                    if let Ok(mut done) = done.lock() {
                        done.push((i, tried));
                    }
                });
            }
        });
        let mut done = done.into_inner().unwrap_or_default();
        done.sort_by_key(|(i, _)| *i);
        let (told, untold): (Vec<Candidate>, Vec<Candidate>) = done
            .into_iter()
            .map(|(_, t)| t)
            .partition(|t| t.variant.cannot_tell.is_empty());
        (told, untold.into_iter().map(|t| t.settings).collect())
    }

    /// The settings one group of keys away from `from`, not tried yet, valid.
    fn around(
        &self,
        from: &Change,
        seen: &[&SystemSettings],
        base: &SystemSettings,
    ) -> Vec<(Change, SystemSettings)> {
        let mut out: Vec<(Change, SystemSettings)> = Vec::new();
        for group in self.groups {
            for values in &group.values {
                let mut change = from.clone();
                for (key, value) in group.keys.iter().zip(values) {
                    if text_of(base, *key) == *value {
                        change.remove(key);
                    } else {
                        change.insert(*key, value.clone());
                    }
                }
                let Some(settings) = self.search.base().with(self.system, &change) else {
                    continue;
                };
                let Some(s) = settings.system(self.system).cloned() else {
                    continue;
                };
                let known = |t: &SystemSettings| *t == s;
                if known(base) || seen.iter().any(|t| known(t)) || out.iter().any(|(_, o)| known(o))
                {
                    continue;
                }
                out.push((change, s));
            }
        }
        out
    }

    /// The search from `first` (the settings the service ran with): every setting
    /// tried, `first` at 0, and whether it was interrupted.
    pub(crate) fn run(&self, first: Candidate) -> (Vec<Candidate>, bool) {
        let base = first.settings.clone();
        let mut tried = vec![first];
        let mut expanded: Vec<bool> = vec![false];
        // The settings the recording cannot tell, tried once and left out.
        let mut untold: Vec<SystemSettings> = Vec::new();
        while tried.len() < self.search.most && !self.search.stop.load(Ordering::Relaxed) {
            // The best not yet expanded, else the next on the front.
            let best = (0..tried.len()).min_by_key(|&i| tried[i].rank());
            let next = best
                .filter(|&i| !expanded[i])
                .or_else(|| front(&tried).into_iter().find(|&i| !expanded[i]));
            let Some(next) = next else {
                break;
            };
            expanded[next] = true;
            let seen: Vec<&SystemSettings> =
                tried.iter().map(|t| &t.settings).chain(&untold).collect();
            let mut batch = self.around(&tried[next].change, &seen, &base);
            batch.truncate(self.search.most - tried.len());
            let (found, cannot) = self.try_all(batch);
            expanded.extend(found.iter().map(|_| false));
            tried.extend(found);
            untold.extend(cannot);
        }
        (tried, self.search.stop.load(Ordering::Relaxed))
    }
}
