//! The simulation: one system's real [`Guard`] against a scripted upstream, on its own
//! runtime with tokio's paused clock (nothing sleeps for real), and what the run measured.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::args::ScenarioKind;
use crate::transitions::{Moved, Transitions};
use outbound_guard::{CallOptions, Cause, Guard, ManualAction, State};
use outbound_guard_settings::SystemSettings;
use tokio::time::{sleep, Instant};

/// How the upstream behaves, and for how long the callers come.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    pub kind: ScenarioKind,
    /// Successful calls before the fault.
    pub warm: u32,
    pub every: Duration,
    pub duration: Duration,
    pub latency: Duration,
    /// `errors`: the share of answers that are errors.
    pub rate: f64,
    /// `slow`: how long an answer takes.
    pub slow: Duration,
    /// `recovery`: how long the hang lasts.
    pub fault_for: Duration,
    /// `429`: the `Retry-After` of every answer.
    pub retry_after: Duration,
}

impl Script {
    /// How long after the fault starts callers keep coming.
    fn run_for(&self) -> Duration {
        match self.kind {
            ScenarioKind::Recovery => self.fault_for + self.duration,
            _ => self.duration,
        }
    }
}

/// One caller's call: when it started and finished (relative to the fault's start),
/// and why it was refused, if it was.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Since the fault started (zero for a warm caller).
    started: Duration,
    took: Duration,
    /// When the caller was told, in seconds since the fault started (negative while warm).
    told: f64,
    /// Before the fault started (a warm caller).
    warm: bool,
    refused: Option<Cause>,
}

/// What a run measured. Times are since the fault started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// The first caller refused (by the breaker or the bulkhead), when it was told.
    pub first_refusal: Option<Duration>,
    /// The breaker's first transition to open.
    pub breaker_opened: Option<Duration>,
    /// The first caller refused without waiting at all.
    pub first_zero_wait_refusal: Option<Duration>,
    /// Upstream calls made from the fault's start to the first zero-wait refusal (all of
    /// them when there was none).
    pub upstream_calls_until_fast_fail: usize,
    /// Upstream calls made from the fault's start to the end of the run.
    pub upstream_calls: usize,
    /// Most callers inside `guard.call` at once (running or waiting for a permit).
    pub most_callers_alive: usize,
    /// Most upstream calls running at once.
    pub most_in_flight: usize,
    /// Callers refused (open, half-open full, bulkhead full) after the fault started.
    pub refused: usize,
    /// Callers after the fault started.
    pub callers: usize,
    /// `recovery`: from the fault's end to the breaker closed again.
    pub recovered_after: Option<Duration>,
    /// How many times the breaker opened (each open → half-open → open is one more).
    pub open_cycles: usize,
    /// Upstream calls started after the breaker first opened: its trial calls, while the
    /// fault lasts.
    pub trial_calls: usize,
    /// The open periods, in order (each opening's length).
    pub open_periods: Vec<Duration>,
}

/// The timeline of a run, for the pictures: one sample per caller arrival, the
/// transitions, and each refusal and upstream call.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Seconds since the fault's start (negative while warm), callers alive, upstream
    /// calls in flight.
    pub samples: Vec<(f64, usize, usize)>,
    /// Seconds since the fault's start, and the state entered.
    pub transitions: Vec<(f64, State)>,
    /// When each refusal was told, in seconds since the fault's start.
    pub refusals: Vec<f64>,
    /// When each upstream call started, in seconds since the fault's start.
    pub upstream: Vec<f64>,
    /// The run's span, in seconds since the fault's start.
    pub start: f64,
    pub end: f64,
    /// `recovery`: when the fault ended.
    pub fault_end: Option<f64>,
}

/// One run's result.
#[derive(Debug, Clone)]
pub struct Run {
    pub figures: Figures,
    pub timeline: Timeline,
}

/// Counts up while alive, and records the most at once.
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Gauge {
    fn new() -> Arc<Gauge> {
        Arc::new(Gauge {
            now: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        })
    }

    fn enter(self: &Arc<Self>) -> Held {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        Held(self.clone())
    }

    fn get(&self) -> usize {
        self.now.load(Ordering::SeqCst)
    }
}

/// One unit of a [`Gauge`], given back when dropped (a call cut off by the timeout is
/// dropped too).
struct Held(Arc<Gauge>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the upstream does with one call.
enum Answer {
    Healthy,
    Hang,
    Error,
    Slow,
    /// 429 with `Retry-After`.
    Busy,
}

/// Runs one scenario against a fresh guard of `settings`, on its own paused runtime.
pub fn run(settings: &SystemSettings, script: &Script) -> Run {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with a paused clock builds");
    runtime.block_on(drive(settings, *script))
}

/// The upstream's answer: `Err` for an error, with the `Retry-After` it carried.
type Upstream = Pin<Box<dyn Future<Output = Result<(), Option<Duration>>> + Send>>;

/// The scripted upstream's counters: calls in flight, when each started, and how many
/// came during the fault.
#[derive(Clone)]
struct Upstreams {
    in_flight: Arc<Gauge>,
    starts: Arc<Mutex<Vec<Instant>>>,
    faulty_calls: Arc<AtomicUsize>,
}

/// The fault's window: from its start to its end (`None`: it lasts to the run's end).
#[derive(Clone, Copy)]
struct Fault {
    at: Instant,
    end: Option<Instant>,
}

impl Upstreams {
    /// How the scripted upstream answers a call started now.
    fn answer(&self, script: &Script, fault: Fault) -> Answer {
        let now = Instant::now();
        let faulty = now >= fault.at && fault.end.is_none_or(|end| now < end);
        if !faulty {
            return Answer::Healthy;
        }
        match script.kind {
            ScenarioKind::Hang | ScenarioKind::Recovery => Answer::Hang,
            ScenarioKind::Slow => Answer::Slow,
            ScenarioKind::RateLimited => Answer::Busy,
            ScenarioKind::Errors => {
                // Errors spread evenly: call i fails when the running share of failures
                // crosses a whole number.
                let i = self.faulty_calls.fetch_add(1, Ordering::SeqCst);
                #[allow(clippy::cast_precision_loss)]
                let (a, b) = (i as f64 * script.rate, (i + 1) as f64 * script.rate);
                if b.floor() > a.floor() {
                    Answer::Error
                } else {
                    Answer::Healthy
                }
            }
        }
    }

    /// One upstream call: counted, then answered as the script says.
    fn call(&self, script: Script, fault: Fault) -> Upstream {
        let this = self.clone();
        Box::pin(async move {
            if let Ok(mut starts) = this.starts.lock() {
                starts.push(Instant::now());
            }
            let _held = this.in_flight.enter();
            match this.answer(&script, fault) {
                Answer::Healthy => {
                    sleep(script.latency).await;
                    Ok(())
                }
                Answer::Error => {
                    sleep(script.latency).await;
                    Err(None)
                }
                Answer::Busy => {
                    sleep(script.latency).await;
                    Err(Some(script.retry_after))
                }
                Answer::Slow => {
                    sleep(script.slow).await;
                    Ok(())
                }
                Answer::Hang => std::future::pending().await,
            }
        })
    }
}

/// One caller: a call through the guard, and what it saw.
async fn caller(guard: Guard, upstream: Upstream, alive: Arc<Gauge>, fault_at: Instant) -> Seen {
    let _alive = alive.enter();
    let start = Instant::now();
    let options = CallOptions::new().retry_after(|hint: &Option<Duration>| *hint);
    let result = guard.call_with(options, upstream).await;
    let took = start.elapsed();
    Seen {
        started: start.saturating_duration_since(fault_at),
        told: secs_between(fault_at, start + took),
        took,
        warm: start < fault_at,
        refused: result
            .err()
            .map(|e| *e.cause())
            .filter(|c| !matches!(c, Cause::Timeout { .. } | Cause::Slow { .. })),
    }
}

async fn drive(settings: &SystemSettings, script: Script) -> Run {
    let transitions = Arc::new(Transitions::default());
    let guard = Guard::builder(settings)
        .observer(transitions.clone())
        .build();
    // `cb_mode = "observe"` is simulated as `auto`: what the breaker would refuse.
    guard.breaker().act(ManualAction::Enforce);
    let t0 = Instant::now();
    let fault_at = t0 + script.every * script.warm;
    let fault = Fault {
        at: fault_at,
        end: (script.kind == ScenarioKind::Recovery).then(|| fault_at + script.fault_for),
    };
    let end = fault_at + script.run_for();
    let alive = Gauge::new();
    let upstreams = Upstreams {
        in_flight: Gauge::new(),
        starts: Arc::new(Mutex::new(Vec::new())),
        faulty_calls: Arc::new(AtomicUsize::new(0)),
    };
    let mut tasks = Vec::new();
    let mut samples = Vec::new();
    let since = |at: Instant| secs_between(fault_at, at);
    while Instant::now() < end {
        samples.push((
            since(Instant::now()),
            alive.get(),
            upstreams.in_flight.get(),
        ));
        let call = upstreams.call(script, fault);
        tasks.push(tokio::spawn(caller(
            guard.clone(),
            call,
            alive.clone(),
            fault_at,
        )));
        sleep(script.every).await;
    }
    let mut seen = Vec::with_capacity(tasks.len());
    for task in tasks {
        if let Ok(s) = task.await {
            seen.push(s);
        }
    }
    // The last calls may end after the last arrival: sample the quiet end too.
    let last = Instant::now();
    samples.push((since(last), alive.get(), upstreams.in_flight.get()));
    let transitions = transitions.seen();
    let starts = upstreams
        .starts
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    let most = (
        alive.most.load(Ordering::SeqCst),
        upstreams.in_flight.most.load(Ordering::SeqCst),
    );
    let figures = measure(&seen, &transitions, &starts, fault, most);
    let timeline = Timeline {
        samples,
        transitions: transitions.iter().map(|m| (since(m.at), m.to)).collect(),
        refusals: seen
            .iter()
            .filter(|s| s.refused.is_some())
            .map(|s| s.told)
            .collect(),
        upstream: starts.iter().map(|at| since(*at)).collect(),
        start: since(t0),
        end: since(last),
        fault_end: fault.end.map(since),
    };
    Run { figures, timeline }
}

/// What a run measured, from what its callers saw, the breaker's transitions, the
/// upstream calls' starts, and the most callers and upstream calls alive at once.
fn measure(
    seen: &[Seen],
    transitions: &[Moved],
    starts: &[Instant],
    fault: Fault,
    (most_callers_alive, most_in_flight): (usize, usize),
) -> Figures {
    let fault_at = fault.at;
    let faulty: Vec<&Seen> = seen.iter().filter(|s| !s.warm).collect();
    let first_zero_wait = faulty
        .iter()
        .filter(|s| s.refused.is_some() && s.took.is_zero())
        .map(|s| s.started)
        .min();
    let after = |at: Instant| at.checked_duration_since(fault_at);
    let opens = || transitions.iter().filter(|m| m.to == State::Open);
    Figures {
        first_refusal: faulty
            .iter()
            .filter(|s| s.refused.is_some())
            .map(|s| s.started + s.took)
            .min(),
        breaker_opened: opens()
            .filter(|m| m.at >= fault_at)
            .find_map(|m| after(m.at)),
        first_zero_wait_refusal: first_zero_wait,
        upstream_calls_until_fast_fail: starts
            .iter()
            .filter_map(|at| after(*at))
            .filter(|d| first_zero_wait.is_none_or(|first| *d <= first))
            .count(),
        upstream_calls: starts.iter().filter(|at| **at >= fault_at).count(),
        most_callers_alive,
        most_in_flight,
        refused: faulty.iter().filter(|s| s.refused.is_some()).count(),
        callers: faulty.len(),
        recovered_after: fault.end.and_then(|fault_end| {
            transitions
                .iter()
                .find(|m| m.to == State::Closed && m.at >= fault_end)
                .map(|m| m.at - fault_end)
        }),
        open_cycles: opens().count(),
        trial_calls: opens().next().map_or(0, |opened| {
            starts.iter().filter(|at| **at > opened.at).count()
        }),
        open_periods: opens().filter_map(|m| m.open).collect(),
    }
}

/// Seconds from `from` to `to`, negative when `to` is earlier.
fn secs_between(from: Instant, to: Instant) -> f64 {
    if to >= from {
        (to - from).as_secs_f64()
    } else {
        -(from - to).as_secs_f64()
    }
}
