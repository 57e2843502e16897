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
//! **After it, a call counts at its worst only where it may be refused.**
//! The runtime states its own timing facts (`outbound_guard::__bounds`): the open
//! periods and the longest a call holds a permit; the proof takes them from there.
//!
//! - *By the bulkhead*: a call runs until its answer (its recorded duration, or the
//!   longer of the two a call without an outcome may be given), never past
//!   `total_timeout` (a timeout runs until then). It gets a permit at once if fewer than
//!   `bulkhead_permits` earlier calls may still hold or wait for one; otherwise it may
//!   wait up to `bulkhead_wait`, and may be refused. That gives each call an *end
//!   bound*. (The guard's own timers fire on tokio's whole milliseconds in a replay, up
//!   to 2 ms late: the bounds allow 3.)
//! - *By the breaker*, only after a call that may count a failure: one without an
//!   outcome, a recorded failure, slow call or timeout, or a success or a call its
//!   caller gave up that ran as long as the replayed `cb_slow_threshold` or
//!   `read_timeout`. Its failure stays in the window until `cb_window_size` more calls
//!   are counted (a call the bulkhead may refuse, or whose caller gives up, may count
//!   nothing), so the breaker may open on it until the latest end bound among them. It
//!   stays open at most its longest own open period (the runtime's
//!   `__bounds::open_periods`: `cb_open_duration` with its jitter, or with a backoff
//!   `cb_open_max`; a replayed failure carries no retry hint), then goes half-open at
//!   the next call and admits `cb_half_open_calls` trials. A trial whose caller gives
//!   up hands its slot back when it ends, and holds it until then, so while trials run
//!   the others are refused; once that many trials have succeeded it closes, and one
//!   that fails is itself a call that may count a failure. So the breaker refuses no
//!   call that starts after the latest end bound among those trials and the calls
//!   that may have been admitted before them since it could first be half-open (a call
//!   started before the failing one is admitted before it runs: first come, first
//!   served), unless an operator forced it open before the call was admitted.
//!
//! A call beyond both reaches the upstream in every way: a recorded failure among them
//! adds to the lowest failing calls let through. A call that may be refused by the
//! breaker adds, if it can fail (a recorded failure, or one without an outcome), to the
//! highest failing calls let through and refused; if it can succeed, to the highest
//! healthy calls refused; one the bulkhead may refuse, to the highest bulkhead
//! refusals.
//!
//! **Openings.** Each opening past that instant is made on a failure in the window (one
//! counted then, or at most once, one counted before and still in it), or is an
//! operator's forced opening; and an open period lasts at least `cb_open_duration`
//! (backoff, jitter and retry hints only lengthen it): so at most one per period from
//! that instant to the last end bound, and one more, and no more than one per call that
//! may count a failure then, and one more; plus two per operator's action (a reset
//! lets it open again at once).
//!
//! `ways`' tests check it against the real replay: every call refused in 4,000 replays
//! is one said to be refusable, and every answering of 240 recordings lies in the
//! ranges.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use outbound_guard::ManualAction;
use outbound_guard_settings::SystemSettings;

use super::engine::{Replay, TIMER_SLACK};
use super::figures::{figures_in, limit, FastFailRange, Figure, Incident, Ranges, Span};
use super::guess::{self, Options};
use super::recording::{Call, Recorded};

/// One system's recording, as the proof reads it.
pub(crate) struct Proven<'a> {
    pub(crate) calls: &'a [Call],
    pub(crate) actions: &'a [(u64, ManualAction)],
    pub(crate) incidents: &'a [Incident],
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

/// The longest a call may hold or wait for a permit (µs): the runtime's, each of its two
/// timers up to [`TIMER_SLACK`] late.
fn holds(settings: &SystemSettings) -> u64 {
    micros(outbound_guard::__bounds::longest_hold(settings)).saturating_add(2 * TIMER_SLACK)
}

/// Whether a call may fail: a recorded failure, or one without an outcome.
fn can_fail(c: &Call) -> bool {
    c.outcome.failing() || guess::unknown(c)
}

/// Whether a call may succeed: a recorded success, or one without an outcome.
fn can_succeed(c: &Call) -> bool {
    c.outcome == Recorded::Success || guess::unknown(c)
}

/// Whether a call fails reaching the upstream in every way: a recorded failure that
/// neither the breaker nor the bulkhead may refuse.
fn certain(c: &Call, breaker: bool, bulkhead: bool) -> bool {
    c.outcome.failing() && !breaker && !bulkhead
}

impl Proven<'_> {
    /// The possible ranges of `settings`' figures (see the module's page), from the
    /// estimate's `replay` with its calls without a recorded outcome answered, where it
    /// did not ask, succeeding and failing (`fills`).
    pub(crate) fn bounds(
        &self,
        settings: &SystemSettings,
        replay: &Replay,
        fills: [&[(Recorded, u32)]; 2],
    ) -> Ranges {
        let calls = self.calls;
        let first_ask = calls
            .iter()
            .filter(|c| guess::unknown(c))
            .zip(&replay.asked)
            .filter(|(_, asked)| asked.is_some())
            .map(|(c, _)| c.start)
            .min()
            .unwrap_or(u64::MAX);
        let settled = calls.partition_point(|c| c.start < first_ask);
        let span = Span {
            calls: 0..settled,
            transitions: 0..replay.transitions.partition_point(|t| t.at < first_ask),
        };
        let [succeeding, failing] = fills
            .map(|fill| figures_in(calls, replay, self.incidents, fill, limit(settings), &span));
        let mut possible = Ranges::of(&succeeding);
        possible.widen(&failing);
        let refusable = self.refusable(settings);
        self.widen_past(&mut possible, settings, &refusable, settled);
        possible.figures[Figure::Openings].high += self.openings_past(settings, first_ask);
        self.widen_incidents(&mut possible, &refusable, settled);
        possible
    }

    /// Each figure widened by the calls from `settled` on, each at its worst where it
    /// may be refused.
    fn widen_past(
        &self,
        possible: &mut Ranges,
        settings: &SystemSettings,
        refusable: &Refusable,
        settled: usize,
    ) {
        let Refusable { breaker, bulkhead } = refusable;
        let limit = usize::try_from(limit(settings)).unwrap_or(usize::MAX);
        let ranges = &mut possible.figures;
        for (i, c) in self.calls.iter().enumerate().skip(settled) {
            let through = &mut ranges[Figure::FailingLetThrough];
            through.high += usize::from(can_fail(c));
            through.low += usize::from(certain(c, breaker[i], bulkhead[i]));
            ranges[Figure::FailingRefused].high += usize::from(breaker[i] && can_fail(c));
            ranges[Figure::HealthyRefused].high += usize::from(breaker[i] && can_succeed(c));
            ranges[Figure::BulkheadRefused].high += usize::from(bulkhead[i]);
            let cancelled = !can_fail(c) && !can_succeed(c);
            ranges[Figure::CancelledRefused].high += usize::from(breaker[i] && cancelled);
            // A call may run, and wait up to the limit.
            let waited = &mut ranges[Figure::Waited].high;
            *waited = waited.saturating_add(limit);
        }
    }

    /// The most openings past `first_ask`: one per open period to the last end bound
    /// and one more, no more than one per call that may count a failure then and one
    /// more, and two per operator's action.
    fn openings_past(&self, settings: &SystemSettings, first_ask: u64) -> usize {
        let holds = holds(settings);
        let last_end = self
            .calls
            .last()
            .map_or(0, |c| c.start.saturating_add(holds));
        let period = micros(settings.cb_open_duration()).max(1);
        let periods = usize::try_from(last_end.saturating_sub(first_ask) / period)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        let actions = self
            .actions
            .iter()
            .filter(|(at, _)| *at >= first_ask)
            .count();
        let failures_then = self
            .calls
            .iter()
            .filter(|c| {
                c.start.saturating_add(holds) >= first_ask && Self::may_count_failure(settings, c)
            })
            .count();
        periods
            .min(failures_then.saturating_add(1))
            .saturating_add(2 * actions)
    }

    /// Each incident's failing calls let through widened by its calls from `settled`
    /// on, and its soonest fast fail the first call the breaker may refuse in it.
    fn widen_incidents(&self, possible: &mut Ranges, refusable: &Refusable, settled: usize) {
        let calls = self.calls;
        let Refusable { breaker, bulkhead } = refusable;
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
                through.low += usize::from(certain(c, breaker[j], bulkhead[j]));
            }
            if fast.soonest.is_none() {
                let until = self.incidents.get(i + 1).map_or(u64::MAX, |n| n.start);
                let refusable = |j: &usize| {
                    let start = calls[*j].start;
                    breaker[*j] && start >= incident.start && start < until
                };
                *fast = FastFailRange {
                    soonest: (settled..calls.len())
                        .find(refusable)
                        .map(|j| calls[j].start - incident.start),
                    latest: None,
                };
            }
        }
    }

    /// Which calls the breaker and the bulkhead may refuse, in some way of answering.
    pub(crate) fn refusable(&self, settings: &SystemSettings) -> Refusable {
        let (ends, bulkhead) = self.bulkhead(settings);
        let breaker = self.breaker_may_refuse(settings, &ends, &bulkhead);
        Refusable { breaker, bulkhead }
    }

    /// Each call's end bound (no later than this it has ended, given up its permit or
    /// its wait for one), and whether the bulkhead may refuse it. It runs until its
    /// answer (the recorded duration, or the longer of the two it may be given), never
    /// past `total_timeout` (a timeout runs until then). It gets a permit at once if
    /// fewer than `bulkhead_permits` earlier calls may hold one or wait for one (each
    /// until its end bound); otherwise it may wait up to `bulkhead_wait` first, and
    /// may be refused.
    fn bulkhead(&self, settings: &SystemSettings) -> (Vec<u64>, Vec<bool>) {
        // The guard's own timers (its total timeout, a bulkhead's wait) fire on tokio's
        // whole milliseconds, up to 2 ms late in a replay (see the engine).
        let total = micros(settings.total_timeout()) + TIMER_SLACK;
        let wait = micros(settings.bulkhead_wait()) + TIMER_SLACK;
        let permits = settings.bulkhead_permits();
        let run = |(outcome, duration): (Recorded, u32)| match outcome {
            Recorded::Timeout | Recorded::Cut => total,
            _ => u64::from(duration).min(total),
        };
        let mut options = self.options.iter();
        let mut busy: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
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
                while busy.peek().is_some_and(|e| e.0 <= c.start) {
                    busy.pop();
                }
                let full = busy.len() >= permits;
                let waits = if full { wait } else { 0 };
                let end = c.start.saturating_add(waits).saturating_add(runs);
                busy.push(Reverse(end));
                (end, full)
            })
            .unzip()
    }

    /// Whether a call may count a failure in the replayed breaker: any but a success or
    /// a call its caller gave up (which counts nothing), unless it ran as long as the
    /// replayed `cb_slow_threshold` or `read_timeout`.
    fn may_count_failure(settings: &SystemSettings, c: &Call) -> bool {
        let long = micros(settings.cb_slow_threshold().min(settings.read_timeout()));
        !matches!(c.outcome, Recorded::Success | Recorded::Cancelled)
            || u64::from(c.duration) >= long
    }

    /// Whether each call may be refused by the breaker (see the module's page); `ends`
    /// are the calls' end bounds, `bulkhead` says which calls the bulkhead may refuse.
    fn breaker_may_refuse(
        &self,
        settings: &SystemSettings,
        ends: &[u64],
        bulkhead: &[bool],
    ) -> Vec<bool> {
        let calls = self.calls;
        let holds = holds(settings);
        // The shortest and the longest open period, the runtime's own (a replayed
        // failure carries no retry hint).
        let (open_min, open_max) = outbound_guard::__bounds::open_periods(settings);
        let (open_min, open_max) = (micros(open_min), micros(open_max));
        let wait = micros(settings.bulkhead_wait()) + TIMER_SLACK;
        let trials = settings.cb_half_open_calls() as usize;
        let window = settings.cb_window_size() as usize;
        // `counted[j]`: how many of the first `j` calls are admitted and counted while
        // the breaker is closed, or taken as trials while half-open (the bulkhead
        // admits it, its caller waits for it).
        let mut counted = vec![0_usize; calls.len() + 1];
        for (j, c) in calls.iter().enumerate() {
            let may = !bulkhead[j] && c.outcome != Recorded::Cancelled;
            counted[j + 1] = counted[j] + usize::from(may);
        }
        // The `n`-th such call from `from` on (`None`: the recording ends before it).
        let nth_counted = |from: usize, n: usize| -> Option<usize> {
            let last = counted.partition_point(|k| *k < counted[from] + n);
            last.checked_sub(1).filter(|l| *l < calls.len())
        };
        // The latest end bound among the calls `from..=to`.
        let latest_end = |from: usize, to: usize| -> u64 {
            let scanned = ends.get(from..=to).unwrap_or_default();
            if scanned.len() <= MOST_SCANNED {
                scanned.iter().copied().max().unwrap_or(0)
            } else {
                calls[to].start.saturating_add(holds)
            }
        };
        // The latest start a refusal may come at, from the calls that may count a
        // failure so far (each lets the breaker refuse from its own start on).
        let mut reach: Option<u64> = None;
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let refusable =
                    reach.is_some_and(|r| c.start <= r) || self.forced_open_at(c.start, wait);
                if Self::may_count_failure(settings, c) {
                    // Its failure stays in the window until `cb_window_size` more calls
                    // are counted (or a transition empties it): the breaker may open on
                    // it until then. It is half-open an open period later at the
                    // latest; the trials are the first calls it admits from then on
                    // (from the earliest it can be half-open: an open period after this
                    // call's start, less a bulkhead's wait), and once they have ended it
                    // refuses nothing.
                    let until = nth_counted(i, window + 1).and_then(|left| {
                        let opened = latest_end(i, left);
                        let half_open = opened.saturating_add(open_max);
                        let from = calls.partition_point(|d| d.start < half_open);
                        let earliest = c.start.saturating_add(open_min).saturating_sub(wait);
                        let first = calls.partition_point(|d| d.start < earliest);
                        let last_trial = self.last_trial(first, from, trials, ends, bulkhead)?;
                        Some(latest_end(first, last_trial))
                    });
                    let until = until.unwrap_or(u64::MAX);
                    reach = Some(reach.map_or(until, |r| r.max(until)));
                }
                refusable
            })
            .collect()
    }

    /// The latest a half-open breaker's last trial may be, the breaker half-open from
    /// call `from` on at the latest (from `first` at the earliest), admitting `trials`
    /// trials (`None`: the recording ends first, or the scan would be too long). A trial
    /// whose caller gives up hands its slot back when it ends, and holds it until then:
    /// each call that may be cancelled is taken to hold a slot until its end bound
    /// (those from `first` on too, had the breaker gone half-open that early), and each
    /// that may be refused by the bulkhead to take none.
    fn last_trial(
        &self,
        first: usize,
        from: usize,
        trials: usize,
        ends: &[u64],
        bulkhead: &[bool],
    ) -> Option<usize> {
        let calls = self.calls;
        let start = calls.get(from)?.start;
        let mut holding: Vec<u64> = (first..from)
            .filter(|&j| calls[j].outcome == Recorded::Cancelled && ends[j] > start)
            .map(|j| ends[j])
            .collect();
        let mut taken = 0;
        for j in from..calls.len().min(from.saturating_add(MOST_SCANNED)) {
            let d = &calls[j];
            holding.retain(|end| *end > d.start);
            if taken + holding.len() >= trials {
                continue;
            }
            if d.outcome == Recorded::Cancelled {
                holding.push(ends[j]);
            } else if !bulkhead[j] {
                taken += 1;
                if taken == trials {
                    return Some(j);
                }
            }
        }
        None
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
