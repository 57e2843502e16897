//! Ranges that hold the figures of every way of answering the calls without a recorded
//! outcome, proven without replaying each way: for a setting whose ways are too many to
//! walk ([`ways`](super::ways)).
//!
//! **Until the first answer asked, every way is one.** Every replay goes alike until
//! the first call without a recorded outcome runs: no sooner than the earliest start of
//! one the estimate's replay asked about. A call that started before that had its fate
//! by then (the bulkhead is first come, first served: one waiting for a permit got it,
//! or gave up, before any later call ran). Those calls, and the transitions before that
//! instant, count as the estimate's replay counted them, the ones it refused answered
//! both ways.
//!
//! **After it, each call counts at its worst where it can be refused.** A replayed
//! call waits for its bulkhead permit at most `bulkhead_wait`, then holds it until its
//! answer (the recorded duration, or the longer of the two a call without an outcome
//! may be given), never past `total_timeout` (its *end bound*), so a call can be
//! refused by the bulkhead only if at least `bulkhead_permits` earlier calls may still
//! hold one or wait for one. By the breaker, only after a
//! call that may count a failure (one without an outcome, a recorded failure, slow call
//! or timeout, or a success or a call its caller gave up that ran as long as the
//! replayed `cb_slow_threshold` or `read_timeout`): its failure is counted by its end bound; an open period lasts at
//! most `cb_open_duration` with its jitter, or with a backoff `cb_open_max` (a replayed
//! failure carries no retry hint); the breaker then goes half-open at the next call, and the first
//! `cb_half_open_calls` calls it admits are its trials (a call the bulkhead may refuse,
//! or whose caller gives up, may not be one). While they run it refuses the others;
//! once all have succeeded it closes, and one that fails is itself a call that may
//! count a failure. So the breaker refuses no call that starts after the end bounds of
//! the trials that follow each such call (a call started before such a call is admitted
//! before it runs: first come, first served), unless an operator forced it open before
//! the call was admitted (up to `bulkhead_wait` after it started). A call
//! beyond those reaches the upstream in every way (if the bulkhead cannot refuse it
//! either): a recorded failure among them adds to the lowest failing calls let through.
//! A call within them may have run or been refused: one that can fail (a recorded
//! failure, or one without an outcome) adds to the highest failing calls let through and
//! refused, one that can succeed to the highest healthy calls refused.
//!
//! **Openings.** Each opening past that instant is a failure counted then (or an
//! operator's forced opening), and an open period lasts at least `cb_open_duration`
//! (backoff, jitter and retry hints only lengthen it): so at most one per period from
//! that instant to the last end bound, and one more, plus two per operator's action (a
//! reset lets it open again at once), and at most as many as the calls that may count
//! a failure then.
//!
//! `ways`' brute-force test checks every one of these ranges against every answering.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use outbound_guard::ManualAction;
use outbound_guard_settings::SystemSettings;

use super::engine::Replay;
use super::figures::{figures_in, Bounds, FastFailRange, Incident, Span};
use super::guess::{self, Options};
use super::recording::{Call, Recorded};

/// One system's recording and the estimate's replay of one setting.
pub(crate) struct Proven<'a> {
    pub(crate) calls: &'a [Call],
    pub(crate) actions: &'a [(u64, ManualAction)],
    pub(crate) incidents: &'a [Incident],
    /// The estimate's replay.
    pub(crate) replay: &'a Replay,
    /// Its calls without a recorded outcome answered succeeding where it did not ask,
    /// then failing.
    pub(crate) fills: [&'a [Recorded]; 2],
    /// The answers each call without a recorded outcome may be given.
    pub(crate) options: &'a [Options],
}

/// Whether each call (in order) may be refused, in some way of answering.
pub(crate) struct Refusable {
    /// By the breaker: open, half-open with every trial taken, or forced open.
    pub(crate) breaker: Vec<bool>,
    /// By the bulkhead.
    pub(crate) bulkhead: Vec<bool>,
}

/// The most end bounds read for one half-open period's trials; past it, the last
/// trial's start plus the longest a call can take stands for them (as sound, wider).
const MOST_SCANNED: usize = 1024;

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Proven<'_> {
    /// The possible ranges of `settings`' figures (see the module's page).
    pub(crate) fn bounds(&self, settings: &SystemSettings) -> Bounds {
        let calls = self.calls;
        let first_ask = calls
            .iter()
            .filter(|c| guess::unknown(c))
            .zip(&self.replay.asked)
            .filter(|(_, asked)| asked.is_some())
            .map(|(c, _)| c.start)
            .min()
            .unwrap_or(u64::MAX);
        let settled = calls.partition_point(|c| c.start < first_ask);
        let span = Span {
            calls: 0..settled,
            transitions: 0..self
                .replay
                .transitions
                .partition_point(|t| t.at < first_ask),
        };
        let [succeeding, failing] = self
            .fills
            .map(|fill| figures_in(calls, self.replay, self.incidents, fill, &span));
        let mut possible = Bounds::of(&succeeding);
        possible.widen(&failing);

        let holds =
            micros(settings.bulkhead_wait()).saturating_add(micros(settings.total_timeout()));
        let Refusable { breaker, bulkhead } = self.refusable(settings);
        let can_fail = |c: &Call| c.outcome.failing() || guess::unknown(c);
        let can_succeed = |c: &Call| c.outcome == Recorded::Success || guess::unknown(c);
        let certain = |i: usize| calls[i].outcome.failing() && !breaker[i] && !bulkhead[i];
        for i in settled..calls.len() {
            let c = &calls[i];
            let through = &mut possible.failing_let_through;
            through.high += usize::from(can_fail(c));
            through.low += usize::from(certain(i));
            possible.failing_refused.high += usize::from(breaker[i] && can_fail(c));
            possible.healthy_refused.high += usize::from(breaker[i] && can_succeed(c));
            possible.bulkhead_refused.high += usize::from(bulkhead[i]);
        }

        let last_end = calls.last().map_or(0, |c| c.start.saturating_add(holds));
        let period = micros(settings.cb_open_duration()).max(1);
        let periods = usize::try_from(last_end.saturating_sub(first_ask) / period)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        let actions = self
            .actions
            .iter()
            .filter(|(at, _)| *at >= first_ask)
            .count();
        let failures_then = calls
            .iter()
            .filter(|c| {
                c.start.saturating_add(holds) >= first_ask && self.may_count_failure(settings, c)
            })
            .count();
        possible.openings.high += periods.min(failures_then).saturating_add(2 * actions);

        for (i, (fast, through)) in possible.incidents.iter_mut().enumerate() {
            let incident = self.incidents[i];
            let in_it = |c: &Call| (incident.start..=incident.end).contains(&c.start);
            for (j, c) in calls
                .iter()
                .enumerate()
                .skip(settled)
                .filter(|(_, c)| in_it(c))
            {
                through.high += usize::from(can_fail(c));
                through.low += usize::from(certain(j));
            }
            if fast.soonest.is_none() {
                let until = self.incidents.get(i + 1).map_or(u64::MAX, |n| n.start);
                *fast = FastFailRange {
                    soonest: (settled..calls.len())
                        .find(|j| {
                            let start = calls[*j].start;
                            breaker[*j] && start >= incident.start && start < until
                        })
                        .map(|j| calls[j].start - incident.start),
                    latest: None,
                };
            }
        }
        possible
    }

    /// Which calls the breaker and the bulkhead may refuse, in some way of answering.
    pub(crate) fn refusable(&self, settings: &SystemSettings) -> Refusable {
        let holds =
            micros(settings.bulkhead_wait()).saturating_add(micros(settings.total_timeout()));
        let ends = self.ends(settings);
        let bulkhead = self.bulkhead_may_refuse(&ends, settings.bulkhead_permits());
        let breaker = self.breaker_may_refuse(settings, &ends, holds, &bulkhead);
        Refusable { breaker, bulkhead }
    }

    /// Each call's end bound: no later than this it has ended, given up its permit or
    /// its wait for one. It waits at most `bulkhead_wait`, then runs until its answer
    /// (the recorded duration, or the longer of the two it may be given), never past
    /// `total_timeout`; a timeout runs until then.
    fn ends(&self, settings: &SystemSettings) -> Vec<u64> {
        let total = micros(settings.total_timeout());
        let wait = micros(settings.bulkhead_wait());
        let run = |(outcome, duration): (Recorded, u32)| match outcome {
            Recorded::Timeout | Recorded::Cut => total,
            _ => u64::from(duration).min(total),
        };
        let mut options = self.options.iter();
        self.calls
            .iter()
            .map(|c| {
                let runs = if guess::unknown(c) {
                    options
                        .next()
                        .map_or(total, |o| run(o.success).max(run(o.failing)))
                } else {
                    run((c.outcome, c.duration))
                };
                c.start.saturating_add(wait).saturating_add(runs)
            })
            .collect()
    }

    /// Whether each call may be refused by the bulkhead: at least `permits` earlier
    /// calls may hold a permit, or wait for one, at its start (each until its end bound).
    fn bulkhead_may_refuse(&self, ends: &[u64], permits: usize) -> Vec<bool> {
        let mut busy: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
        self.calls
            .iter()
            .zip(ends)
            .map(|(c, end)| {
                while busy.peek().is_some_and(|e| e.0 <= c.start) {
                    busy.pop();
                }
                let full = busy.len() >= permits;
                busy.push(Reverse(*end));
                full
            })
            .collect()
    }

    /// Whether a call may count a failure in the replayed breaker: any but a success or
    /// a call its caller gave up (which counts nothing), unless it ran as long as the
    /// replayed `cb_slow_threshold` or `read_timeout`.
    fn may_count_failure(&self, settings: &SystemSettings, c: &Call) -> bool {
        let long = micros(settings.cb_slow_threshold().min(settings.read_timeout()));
        !matches!(c.outcome, Recorded::Success | Recorded::Cancelled)
            || u64::from(c.duration) >= long
    }

    /// Whether each call may be refused by the breaker (see the module's page); `holds`
    /// bounds how long a call runs, `bulkhead` says which calls the bulkhead may refuse.
    fn breaker_may_refuse(
        &self,
        settings: &SystemSettings,
        ends: &[u64],
        holds: u64,
        bulkhead: &[bool],
    ) -> Vec<bool> {
        let calls = self.calls;
        // The longest open period: `cb_open_duration` with its jitter, or with a backoff,
        // `cb_open_max` (a replayed failure carries no retry hint).
        let open = settings.cb_open_duration();
        let open_max = micros(if settings.cb_open_backoff() > 1.0 {
            settings.cb_open_max().max(open)
        } else {
            open.mul_f64(1.0 + settings.cb_open_jitter())
                .min(settings.cb_open_max().max(open))
        });
        let open_min = micros(open);
        let wait = micros(settings.bulkhead_wait());
        let trials = settings.cb_half_open_calls() as usize;
        // `could_try[j]`: how many of the first `j` calls may be a trial (the bulkhead
        // admits it, its caller waits for it).
        let mut could_try = vec![0_usize; calls.len() + 1];
        for (j, c) in calls.iter().enumerate() {
            let may = !bulkhead[j] && c.outcome != Recorded::Cancelled;
            could_try[j + 1] = could_try[j] + usize::from(may);
        }
        // The latest start a refusal may come at, from the calls that may count a
        // failure so far (each lets the breaker refuse from its own start on).
        let mut reach: Option<u64> = None;
        calls
            .iter()
            .zip(ends)
            .map(|(c, end)| {
                let refusable =
                    reach.is_some_and(|r| c.start <= r) || self.forced_open_at(c.start, wait);
                if self.may_count_failure(settings, c) {
                    // Half-open no later than this; its trials are the first calls it
                    // admits from then on, and it refuses nothing once they have ended.
                    let half_open = end.saturating_add(open_max);
                    let from = calls.partition_point(|d| d.start < half_open);
                    let enough = could_try[from] + trials;
                    let last = could_try.partition_point(|n| *n < enough);
                    // `could_try[last]` is the first to reach `enough`: call `last - 1`
                    // is the last trial (none: the recording ends before them). The
                    // trials are among the calls admitted from the earliest it can go
                    // half-open (an open period after the failure counted, no sooner
                    // than its start); the latest end bound among them ends it.
                    let until = match last.checked_sub(1).and_then(|l| calls.get(l)) {
                        None => u64::MAX,
                        Some(trial) => {
                            let earliest = c.start.saturating_add(open_min).saturating_sub(wait);
                            let first = calls.partition_point(|d| d.start < earliest);
                            if last - first.min(last) <= MOST_SCANNED {
                                ends[first.min(last)..last]
                                    .iter()
                                    .copied()
                                    .max()
                                    .unwrap_or(0)
                            } else {
                                trial.start.saturating_add(holds)
                            }
                        }
                    };
                    reach = Some(reach.map_or(until, |r| r.max(until)));
                }
                refusable
            })
            .collect()
    }

    /// Whether an operator's (or the settings file's) forced opening may be in force
    /// when a call started at `at` is admitted, up to `wait` later: the last action
    /// before it, or one while it waits, forced the breaker open.
    fn forced_open_at(&self, at: u64, wait: u64) -> bool {
        let done = self.actions.partition_point(|(t, _)| *t <= at);
        let waited = self
            .actions
            .partition_point(|(t, _)| *t <= at.saturating_add(wait));
        done > 0 && self.actions[done - 1].1 == ManualAction::ForceOpen
            || self.actions[done..waited]
                .iter()
                .any(|(_, action)| *action == ManualAction::ForceOpen)
    }
}
