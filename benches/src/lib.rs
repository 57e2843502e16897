//! Shared pieces of the hot-path benchmarks (`benches/hot_path.rs`) and the hot-path
//! tests (`tests/hot_path.rs`): the one wrapped call every subject runs, each subject
//! built with settings as close to ours as it allows, and a runner that times the same
//! body on one thread or on several threads sharing one instance.
//!
//! Our settings are the guide's defaults: a count window of the last 50 calls, at least
//! 10 before it may open, 50% failure rate, 30 s open, 3 half-open trials. With the
//! benches' outcome mixes (all `Ok`, or every tenth call `Err`) no breaker ever opens,
//! so every subject measures its closed-state hot path.
#![deny(missing_docs)]

pub mod budget;
mod call;

use std::future::Future;
use std::ops::Range;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use outbound_guard::{Settings, SystemSettings};
use tower::Service;

/// `cb_window_size`: the breaker's window, in calls.
pub const WINDOW: u32 = 50;
/// `cb_min_calls`: outcomes needed before a breaker may open.
pub const MIN_CALLS: u32 = 10;
/// `cb_failure_rate`: the share of failures that opens a breaker.
pub const FAILURE_RATE: f64 = 0.5;
/// `cb_open_duration`.
pub const OPEN: Duration = Duration::from_secs(30);
/// `cb_half_open_calls`.
pub const TRIALS: u32 = 3;

pub use call::{op, op_async, Boom, Mix};

/// Our settings for the system `bench`: the guide's defaults, stated explicitly so they
/// match the peers' configuration below.
///
/// # Panics
///
/// Never: the settings are this crate's constants, which parse.
pub fn settings() -> SystemSettings {
    settings_file()
        .system("bench")
        .expect("system `bench` is declared")
        .clone()
}

/// The whole settings file with the one system `bench` of [`settings`], for building
/// the guard through `Guards`.
///
/// # Panics
///
/// Never: the settings are this crate's constants, which parse.
pub fn settings_file() -> Settings {
    let text = format!(
        "[systems.bench]\ncb_window_size = {WINDOW}\ncb_min_calls = {MIN_CALLS}\n\
         cb_failure_rate = {FAILURE_RATE}\ncb_open_duration = {}\ncb_half_open_calls = {TRIALS}\n",
        OPEN.as_secs_f64()
    );
    Settings::parse(&text, "inline").expect("bench settings are valid")
}

/// recloser 1.4: a count window of 50 calls while closed (it only judges a full ring),
/// 50% error rate, 30 s open, 3 half-open calls.
pub fn recloser() -> recloser::Recloser {
    recloser::Recloser::custom()
        .error_rate(FAILURE_RATE as f32)
        .closed_len(WINDOW as usize)
        .half_open_len(TRIALS as usize)
        .open_wait(OPEN)
        .build()
}

/// The failure policy failsafe is built with: see [`failsafe()`].
pub type FailsafePolicy =
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>;

/// failsafe 1.3: it has no count-based window, so the closest policy is its success
/// rate over a time window: at least 50% successes (= at most 50% failures), at least
/// 10 requests, over 30 s, then open for a constant 30 s.
pub fn failsafe() -> failsafe::StateMachine<FailsafePolicy, ()> {
    let policy = failsafe::failure_policy::success_rate_over_time_window(
        1.0 - FAILURE_RATE,
        MIN_CALLS,
        OPEN,
        failsafe::backoff::constant(OPEN),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

/// tower-resilience-circuitbreaker 0.14 around a `tower::service_fn` of [`op`]:
/// count-based sliding window of 50, at least 10 calls, 50% failure rate, 30 s open,
/// 3 half-open calls, no slow-call detection. Clones share one breaker, as tower
/// services do, so each thread of a shared run takes a clone of the same instance.
///
/// # Panics
///
/// Never: its settings are this crate's constants, which tower-resilience accepts.
pub fn tower_breaker(
    mix: Mix,
) -> impl Service<
    u64,
    Response = u64,
    Error = tower_resilience_circuitbreaker::CircuitBreakerError<Boom>,
    Future = impl Future<
        Output = Result<u64, tower_resilience_circuitbreaker::CircuitBreakerError<Boom>>,
    > + Send,
> + Clone
       + Send {
    use tower::Layer;
    let layer = tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .failure_rate_threshold(FAILURE_RATE)
        .sliding_window_size(WINDOW as usize)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(OPEN)
        .permitted_calls_in_half_open(TRIALS as usize)
        .build()
        .expect("tower-resilience settings are valid");
    layer.layer(tower::service_fn(move |i: u64| {
        std::future::ready(op(mix, i))
    }))
}

/// Installs a global `tracing` subscriber that wants nothing, as a service has a
/// subscriber installed (one that here filters everything out). Without any subscriber,
/// `tracing`'s `log` feature (which axum's default `tower-log` turns on in this package,
/// as in most services) routes every disabled span through its `log` fallback, a cost
/// of the missing subscriber rather than of the guard. Call once, first thing in `main`.
///
/// # Panics
///
/// If a global subscriber is already installed (a second call).
pub fn quiet_subscriber() {
    tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default())
        .expect("no global subscriber is installed yet");
}

/// A current-thread tokio runtime with the timer on: what one thread of an async
/// subject runs its loop on (the whole loop inside one `block_on`).
///
/// # Panics
///
/// If tokio cannot build the runtime (the OS refuses its resources).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

/// Waits for every thread of a run at `start`, then times `body`. Bodies do their
/// per-thread setup (a runtime, a service clone) before calling this, so setup is
/// never timed.
pub fn timed(start: &Barrier, body: impl FnOnce()) -> Duration {
    start.wait();
    let began = Instant::now();
    body();
    began.elapsed()
}

/// The async form of [`timed`]: builds this thread's current-thread runtime, then inside
/// one `block_on` waits at `start` and times `body` (the whole loop of calls). `body` is
/// a future, so nothing in it runs before the timer starts.
pub fn timed_async(start: &Barrier, body: impl Future<Output = ()>) -> Duration {
    runtime().block_on(async {
        start.wait();
        let began = Instant::now();
        body.await;
        began.elapsed()
    })
}

/// Runs `iters` iterations of a subject split over `threads` threads, which share
/// whatever `body` captures (one breaker, one guard). Each thread gets a contiguous
/// range of call indices and returns its own timing from [`timed`]; the run's time is
/// the slowest thread's, so `time / iters` is the cost per call of the shared
/// instance's throughput. With one thread `body` runs on the calling thread.
///
/// # Panics
///
/// If `body` panics on any thread.
pub fn run_on_threads<B>(threads: usize, iters: u64, body: B) -> Duration
where
    B: Fn(Range<u64>, &Barrier) -> Duration + Sync,
{
    let threads = threads.max(1);
    let start = Barrier::new(threads);
    if threads == 1 {
        return body(0..iters, &start);
    }
    let per = iters / threads as u64;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let end = if t + 1 == threads as u64 {
                    iters
                } else {
                    (t + 1) * per
                };
                let range = t * per..end;
                let (body, start) = (&body, &start);
                scope.spawn(move || body(range, start))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a bench thread panicked"))
            .max()
            .unwrap_or_default()
    })
}
