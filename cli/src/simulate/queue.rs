//! The `queue` scenario: an upstream of `--workers` workers behind a queue, each call
//! holding a worker for `--service`, so that its latency grows with the calls in flight
//! past its workers; `--callers` callers call it in a loop, more than it serves. Its
//! workers drop to `--degraded` for `--fault-for` after a healthy `--phase`, and come
//! back for another `--phase`.
//!
//! The upstream is a model the replay's library asks, as its guard lets each call run:
//! a FIFO queue in front of the workers, so
//! that a call that reaches it at `at` is answered when the earliest free worker has
//! served it (`max(at, free) + service`). The callers are the library's closed loop
//! ([`Replay::looped`]), on its paused clock. A call the guard cuts at
//! `total_timeout` keeps its worker until its service is done, as an HTTP server goes
//! on with a request whose client left.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use outbound_guard::State;
use outbound_guard_replay::{Fate, Recorded, Replay};
use outbound_guard_settings::SystemSettings;

/// The upstream and its callers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Upstream {
    pub(crate) workers: u32,
    pub(crate) degraded: u32,
    pub(crate) service: Duration,
    pub(crate) callers: u32,
    /// Each healthy phase, before the drop and after it.
    pub(crate) phase: Duration,
    /// The degraded phase.
    pub(crate) degraded_for: Duration,
}

impl Upstream {
    /// The phases: their names, their spans in seconds and the workers during each.
    pub(crate) fn phases(&self) -> [(String, f64, f64, u32); 3] {
        let (a, b) = (
            self.phase.as_secs_f64(),
            (self.phase + self.degraded_for).as_secs_f64(),
        );
        let c = b + self.phase.as_secs_f64();
        [
            (format!("{} workers", self.workers), 0.0, a, self.workers),
            (format!("{} workers", self.degraded), a, b, self.degraded),
            (
                format!("{} workers again", self.workers),
                b,
                c,
                self.workers,
            ),
        ]
    }

    /// Calls a second the upstream serves with `workers` busy.
    pub(crate) fn capacity(&self, workers: u32) -> f64 {
        f64::from(workers) / self.service.as_secs_f64().max(1e-6)
    }

    fn end(&self) -> Duration {
        self.phase * 2 + self.degraded_for
    }
}

/// The upstream's workers behind their FIFO queue, as the replay asks them.
struct Workers {
    /// When each worker is next free, since the run's start.
    free: BinaryHeap<Reverse<Duration>>,
    service: Duration,
    /// The drop still to come: when, when the workers come back, how many leave.
    drop: Option<(Duration, Duration, u32)>,
}

impl Workers {
    fn new(upstream: &Upstream) -> Workers {
        let taken = upstream.workers.saturating_sub(upstream.degraded);
        Workers {
            free: (0..upstream.workers)
                .map(|_| Reverse(Duration::ZERO))
                .collect(),
            service: upstream.service,
            drop: (taken > 0).then_some((
                upstream.phase,
                upstream.phase + upstream.degraded_for,
                taken,
            )),
        }
    }

    /// How long until the call that reaches the queue `at` is served.
    fn answer(&mut self, at: Duration) -> Duration {
        // The workers that leave take their place in the queue when the drop comes:
        // each leaves as it finishes the calls queued before, and is back at its end.
        if let Some((_, back_at, taken)) = self.drop.filter(|d| at >= d.0) {
            self.drop = None;
            let leaving: Vec<Duration> = (0..taken)
                .filter_map(|_| self.free.pop().map(|Reverse(free)| free))
                .collect();
            self.free
                .extend(leaving.into_iter().map(|free| Reverse(free.max(back_at))));
        }
        let Reverse(free) = self.free.pop().unwrap_or(Reverse(at));
        let done = at.max(free) + self.service;
        self.free.push(Reverse(done));
        done - at
    }
}

/// How one call ended, at `at` seconds since the run's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum End {
    /// Answered: seconds since admitted, and since the caller started (its wait for a
    /// permit included).
    Ok { admitted: f64, whole: f64 },
    /// Refused by a full bulkhead.
    BulkheadFull,
    /// Refused by the breaker (open, half-open full, forced open).
    Open,
    /// Cut at `total_timeout`, or failed.
    Timeout,
}

/// One run: each call's end, the breaker's transitions, the limit over time.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueueRun {
    /// (seconds since the start, how the call ended).
    pub(crate) ends: Vec<(f64, End)>,
    pub(crate) transitions: Vec<(f64, State)>,
    /// (seconds, the bulkhead's limit), every 100 ms.
    pub(crate) limits: Vec<(f64, usize)>,
}

/// A refused caller calls again this much later.
const REFUSED_PAUSE: Duration = Duration::from_millis(10);

/// The bulkhead's limit is sampled this often (µs).
const SAMPLED_EVERY: u64 = 100_000;

#[allow(clippy::cast_precision_loss)]
fn seconds(micros: u64) -> f64 {
    micros as f64 / 1e6
}

/// Runs the scenario against a fresh guard of `settings`: its callers in the replay's
/// closed loop against the upstream's workers.
pub(crate) fn run(settings: &SystemSettings, upstream: &Upstream) -> QueueRun {
    let mut workers = Workers::new(upstream);
    let end = upstream.end();
    let mut answer = |at, _in_flight| Ok(workers.answer(at));
    let replay = Replay::looped(settings, &mut answer, upstream.callers, end, REFUSED_PAUSE);
    let ends = replay
        .calls
        .iter()
        .zip(&replay.fates)
        .zip(&replay.times)
        .map(|((call, fate), &(answered, began))| {
            let how = match (fate, call.outcome) {
                (Fate::BulkheadFull, _) => End::BulkheadFull,
                (Fate::Refused, _) => End::Open,
                (_, Recorded::Success) => End::Ok {
                    admitted: seconds(answered.saturating_sub(began)),
                    whole: seconds(u64::from(call.duration)),
                },
                _ => End::Timeout,
            };
            (seconds(answered), how)
        })
        .collect();
    let transitions = replay
        .transitions
        .iter()
        .map(|t| (seconds(t.at), t.to))
        .collect();
    let end = u64::try_from(end.as_micros()).unwrap_or(u64::MAX);
    // The limit at each sample: as it stood coming into that instant (the last change
    // before it; at the start, the guard's first limit).
    let (mut changes, mut limit) = (replay.limits.iter().peekable(), 0);
    let limits = (0..end.div_ceil(SAMPLED_EVERY))
        .map(|k| k * SAMPLED_EVERY)
        .map(|at| {
            while let Some((_, changed)) =
                changes.next_if(|(changed, _)| *changed < at || *changed == 0)
            {
                limit = *changed;
            }
            (seconds(at), limit)
        })
        .collect();
    QueueRun {
        ends,
        transitions,
        limits,
    }
}

/// One phase's figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PhaseFigures {
    pub(crate) name: String,
    /// The upstream's capacity, calls a second.
    pub(crate) capacity: f64,
    /// Successful calls a second.
    pub(crate) goodput: f64,
    /// p50 and p99 of successful calls once admitted, and from the caller's start, ms.
    pub(crate) admitted: (f64, f64),
    pub(crate) whole: (f64, f64),
    pub(crate) bulkhead_full: usize,
    pub(crate) open: usize,
    pub(crate) timeouts: usize,
    pub(crate) openings: usize,
    /// The lowest and highest limit during the phase.
    pub(crate) limit: (usize, usize),
    /// Seconds into the phase until a second served at least 90% of the capacity.
    pub(crate) settled: Option<u32>,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[at]
}

/// Each phase's figures from a run.
pub(crate) fn phases(upstream: &Upstream, run: &QueueRun) -> Vec<PhaseFigures> {
    upstream
        .phases()
        .into_iter()
        .map(|(name, from, to, workers)| {
            let within = |t: f64| t >= from && t < to;
            let (mut admitted, mut whole) = (Vec::new(), Vec::new());
            let (mut full, mut open, mut timeouts) = (0, 0, 0);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let mut per_second = vec![0_u32; (to - from).ceil().max(1.0) as usize];
            for &(t, end) in run.ends.iter().filter(|(t, _)| within(*t)) {
                match end {
                    End::Ok {
                        admitted: a,
                        whole: w,
                    } => {
                        admitted.push(a * 1000.0);
                        whole.push(w * 1000.0);
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        if let Some(n) = per_second.get_mut((t - from) as usize) {
                            *n += 1;
                        }
                    }
                    End::BulkheadFull => full += 1,
                    End::Open => open += 1,
                    End::Timeout => timeouts += 1,
                }
            }
            admitted.sort_by(f64::total_cmp);
            whole.sort_by(f64::total_cmp);
            let capacity = upstream.capacity(workers);
            let limits = run.limits.iter().filter(|(t, _)| within(*t)).map(|l| l.1);
            PhaseFigures {
                name,
                capacity,
                #[allow(clippy::cast_precision_loss)]
                goodput: admitted.len() as f64 / (to - from).max(1e-9),
                admitted: (quantile(&admitted, 0.5), quantile(&admitted, 0.99)),
                whole: (quantile(&whole, 0.5), quantile(&whole, 0.99)),
                bulkhead_full: full,
                open,
                timeouts,
                openings: run
                    .transitions
                    .iter()
                    .filter(|(t, s)| within(*t) && *s == State::Open)
                    .count(),
                limit: limits
                    .clone()
                    .fold((usize::MAX, 0), |(l, h), x| (l.min(x), h.max(x))),
                #[allow(clippy::cast_possible_truncation)]
                settled: per_second
                    .iter()
                    .position(|&n| f64::from(n) >= 0.9 * capacity)
                    .map(|s| s as u32),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers of 100 ms, one of them away from 150 ms to 450 ms: it leaves once
    /// the calls queued before the drop are served, and is back at its end.
    #[test]
    fn a_worker_leaves_after_the_calls_queued_before_and_comes_back() {
        let ms = Duration::from_millis;
        let mut workers = Workers::new(&Upstream {
            workers: 2,
            degraded: 1,
            service: ms(100),
            callers: 1,
            phase: ms(150),
            degraded_for: ms(300),
        });
        let answers: Vec<u128> = [0, 0, 50, 160, 170, 460, 460]
            .into_iter()
            .map(|at| workers.answer(ms(at)).as_millis())
            .collect();
        // 0–100, 0–100, 100–200; after the drop one worker: 200–300, 300–400; both
        // again at 460.
        assert_eq!(answers, [100, 100, 150, 140, 230, 100, 100]);
    }
}
