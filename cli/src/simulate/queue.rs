//! The `queue` scenario: an upstream of `--workers` workers behind a queue, each call
//! holding a worker for `--service`, so that its latency grows with the calls in flight
//! past its workers; `--callers` callers call it in a loop, more than it serves. Its
//! workers drop to `--degraded` for `--fault-for` after a healthy `--phase`, and come
//! back for another `--phase`.
//!
//! Unlike the other scenarios, the upstream's answers are not scripted ahead: each
//! depends on the calls in flight when it runs, so the real guard runs against a model
//! of the upstream (a fair semaphore of workers and tokio's timer) on a paused clock,
//! not through the replay's engine. A call the guard cuts at `total_timeout` leaves its
//! work queued or running at the upstream, as an HTTP server goes on with a request
//! whose client left.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{Cause, Guard, Observer, State, Transition};
use outbound_guard_settings::SystemSettings;
use tokio::sync::{oneshot, Semaphore};
use tokio::time::Instant;

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

/// The breaker's transitions, timed on the run's clock.
struct Transitions {
    t0: Instant,
    seen: Mutex<Vec<(f64, State)>>,
}

impl Observer for Transitions {
    fn on_transition(&self, transition: &Transition<'_>) {
        let at = transition
            .at
            .saturating_duration_since(self.t0)
            .as_secs_f64();
        if let Ok(mut seen) = self.seen.lock() {
            seen.push((at, transition.to));
        }
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

/// Runs the scenario against a fresh guard of `settings`, on a paused runtime of its own.
pub(crate) fn run(settings: &SystemSettings, upstream: &Upstream) -> QueueRun {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds");
    runtime.block_on(drive(settings, *upstream))
}

async fn drive(settings: &SystemSettings, upstream: Upstream) -> QueueRun {
    let t0 = Instant::now();
    let transitions = Arc::new(Transitions {
        t0,
        seen: Mutex::new(Vec::new()),
    });
    let guard = Guard::builder(settings)
        .observer(transitions.clone())
        .build();
    let workers = Arc::new(Semaphore::new(upstream.workers as usize));
    let until = t0 + upstream.end();
    let ends = Arc::new(Mutex::new(Vec::new()));
    let callers: Vec<_> = (0..upstream.callers)
        .map(|_| {
            let (guard, workers, ends) = (guard.clone(), workers.clone(), ends.clone());
            tokio::spawn(async move {
                while Instant::now() < until {
                    let end = call(&guard, &workers, upstream.service).await;
                    let at = t0.elapsed().as_secs_f64();
                    let refused = matches!(end, End::BulkheadFull | End::Open);
                    ends.lock().expect("no caller panics").push((at, end));
                    if refused {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            })
        })
        .collect();
    let limits = capacity_plan(&guard, &workers, &upstream, t0).await;
    for caller in callers {
        let _ = caller.await;
    }
    let ends = std::mem::take(&mut *ends.lock().expect("no caller panics"));
    let transitions = std::mem::take(&mut *transitions.seen.lock().expect("not poisoned"));
    QueueRun {
        ends,
        transitions,
        limits,
    }
}

/// Takes the workers away for the degraded phase and gives them back, sampling the
/// bulkhead's limit every 100 ms until the run's end.
async fn capacity_plan(
    guard: &Guard,
    workers: &Arc<Semaphore>,
    upstream: &Upstream,
    t0: Instant,
) -> Vec<(f64, usize)> {
    let taken = upstream.workers.saturating_sub(upstream.degraded);
    let (drop_at, back_at) = (
        t0 + upstream.phase,
        t0 + upstream.phase + upstream.degraded_for,
    );
    let mut held = None;
    let mut limits = Vec::new();
    while Instant::now() < t0 + upstream.end() {
        let now = Instant::now();
        if held.is_none() && now >= drop_at && now < back_at && taken > 0 {
            // The workers leave as they finish their calls: a fair semaphore serves
            // the calls queued before this first.
            let workers = workers.clone();
            held = Some(tokio::spawn(async move {
                workers.acquire_many_owned(taken).await.ok()
            }));
        }
        if now >= back_at {
            if let Some(taking) = held.take() {
                taking.abort();
                // Given back: dropping the permits returns the workers.
                drop(taking.await.ok().flatten());
            }
        }
        limits.push((now.duration_since(t0).as_secs_f64(), guard.bulkhead_limit()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    limits
}

/// One call through `guard` to the upstream: queued for a worker, then `service`.
async fn call(guard: &Guard, workers: &Arc<Semaphore>, service: Duration) -> End {
    let start = Instant::now();
    let admitted = Mutex::new(start);
    let answer = guard
        .call(async {
            *admitted.lock().expect("not poisoned") = Instant::now();
            let (done, answer) = oneshot::channel();
            let workers = workers.clone();
            // The upstream's work goes on if the caller leaves.
            tokio::spawn(async move {
                if let Ok(_worker) = workers.acquire_owned().await {
                    tokio::time::sleep(service).await;
                    let _ = done.send(());
                }
            });
            answer.await.map_err(|_| ())
        })
        .await;
    let now = Instant::now();
    let admitted = *admitted.lock().expect("not poisoned");
    match answer {
        Ok(Ok(())) => End::Ok {
            admitted: (now - admitted).as_secs_f64(),
            whole: (now - start).as_secs_f64(),
        },
        Err(refused) if matches!(refused.cause(), Cause::BulkheadFull { .. }) => End::BulkheadFull,
        Err(refused) if refused.is_rejection() => End::Open,
        Ok(Err(())) | Err(_) => End::Timeout,
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
