//! Time to fast-fail, side by side: how long until callers get fast rejections, how many
//! calls were issued (and reached the upstream) by then, and how many caller tasks piled
//! up meanwhile, for our guard and for recloser 1.4, failsafe 1.3 and
//! tower-resilience-circuitbreaker 0.14, under the same faults at the same steady traffic,
//! from a cold start and from a warm one (60 successful calls at the same rate first, as
//! in a service that was healthy until the fault).
//!
//! `cargo run -p outbound-guard-benches --release --example fast_fail` prints a markdown table,
//! then, per scenario where the upstream hangs or is slow, how ours with the bulkhead
//! compares with ours without it (plus `bulkhead_wait`) and with every peer.
//!
//! The headline row of each scenario is ours as the guide builds it: the bulkhead of 8
//! permits waiting at most `bulkhead_wait`, the breaker, the total timeout and the slow
//! check, every setting in the guide's proportions.
//!
//! Settings: the guide's defaults at 1/50 of their time, traffic included — connect and
//! `bulkhead_wait` 40 ms (2 s), read 600 ms (30 s), total 700 ms (35 s), slow above
//! 300 ms (15 s), one caller every 2 ms (100 ms), window 50, at least 10 calls, 50% (30%
//! for the critical runs), open 30 s (never reached in a run). Every subject has its own
//! fake upstream on 127.0.0.1 and its own reqwest client (connect 40 ms, read 600 ms); the
//! peers wrap the same call in `tokio::time::timeout(700 ms, …)`; ours runs it under the
//! guard's own 700 ms total timeout. One call is spawned every 2 ms for 3 s per scenario
//! (after the warm-up, in a warm run); all subjects of a scenario run at the same time.
//! Multiply a time by 50 for the guide's seconds.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use failsafe::futures::CircuitBreaker as _;
use outbound_guard::{Cause, Guards, Settings};
use outbound_guard_tests::adapters::{http_client, upstream_call, PortError, UpstreamAdapter};
use outbound_guard_tests::upstream::{FakeUpstream, Fault, Mode};
use tower::{Layer, ServiceExt};

/// The guide's times are divided by this.
const SCALE: u32 = 50;
const INTERVAL: Duration = Duration::from_millis(100 / SCALE as u64);
const RUN: Duration = Duration::from_secs(3);
const CONNECT: Duration = Duration::from_millis(2_000 / SCALE as u64);
const READ: Duration = Duration::from_millis(30_000 / SCALE as u64);
const TOTAL: Duration = Duration::from_millis(35_000 / SCALE as u64);
const SLOW: Duration = Duration::from_millis(15_000 / SCALE as u64);
const WINDOW: usize = 50;
const MIN_CALLS: usize = 10;
const OPEN: Duration = Duration::from_secs(30);
const TRIALS: usize = 3;
/// How long a caller may wait for a bulkhead permit: the connect timeout, as by default.
const BULKHEAD_WAIT: Duration = CONNECT;
/// Successful calls before the fault, in a warm run.
const WARM_CALLS: usize = 60;
/// failsafe's time window: the time 50 calls span at this traffic (50 × 2 ms). failsafe
/// 1.3 averages over `window.as_secs() * 1000` ms, 0 for any window under a second, so
/// its "rate" is the last outcome alone: it opens on the first failure once 10 requests
/// are counted. Kept so (a whole second would hold 500 calls, ten windows' worth): it
/// makes failsafe as eager as it can be, and the comparison no kinder to us.
const FAILSAFE_WINDOW: Duration = Duration::from_millis(50 * 100 / SCALE as u64);

/// A scenario: what the upstream does, and the failure-rate threshold.
#[derive(Clone)]
struct Scenario {
    name: &'static str,
    mode: Mode,
    rate: f64,
    /// The upstream hangs or is slow: ours must be the fastest to fail fast.
    slow: bool,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "(a) hanging upstream",
            mode: Mode::Always(Fault::Hang),
            rate: 0.5,
            slow: true,
        },
        Scenario {
            name: "(b) every call fails (HTTP 500)",
            mode: Mode::Always(Fault::Status(500)),
            rate: 0.5,
            slow: false,
        },
        Scenario {
            name: "(c) 35% fail, threshold 50%",
            mode: Mode::RandomShare {
                share: 0.35,
                status: 500,
                seed: 7,
            },
            rate: 0.5,
            slow: false,
        },
        Scenario {
            name: "(c') 35% fail, critical threshold 30%",
            mode: Mode::RandomShare {
                share: 0.35,
                status: 500,
                seed: 7,
            },
            rate: 0.3,
            slow: false,
        },
        Scenario {
            name: "(d) slow upstream: answers after 400 ms (20 s)",
            mode: Mode::Always(Fault::Delay(Duration::from_millis(
                20_000 / u64::from(SCALE),
            ))),
            rate: 0.5,
            slow: true,
        },
    ]
}

/// How a caller saw one call end.
enum Seen {
    Ok,
    Failed,
    /// The breaker refused it.
    Rejected,
    /// The bulkhead refused it (ours only).
    BulkheadFull,
}

type CallFuture = Pin<Box<dyn Future<Output = Seen> + Send>>;
type Subject = Arc<dyn Fn() -> CallFuture + Send + Sync>;

/// The upstream call every peer wraps: the same GET under `tokio::time::timeout(350 ms)`.
async fn timed_call(http: reqwest::Client, base: String) -> Result<String, PortError> {
    match tokio::time::timeout(TOTAL, upstream_call(&http, &base)).await {
        Ok(result) => result,
        Err(_) => Err(PortError::Transport("timed out".into())),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT)
        .read_timeout(READ)
        .no_proxy()
        .build()
        .expect("a plain-HTTP client builds")
}

/// Our guard: bulkhead (8 permits for `max_connections` 10, or effectively none), breaker,
/// total timeout, slow check.
fn ours(base: String, rate: f64, max_connections: u32) -> Subject {
    let text = format!(
        "[systems.upstream]\nconnect_timeout = {}\nread_timeout = {}\ntotal_timeout = {}\n\
         cb_slow_threshold = {}\ncb_window_size = {WINDOW}\ncb_min_calls = {MIN_CALLS}\n\
         cb_failure_rate = {rate}\ncb_open_duration = {}\ncb_half_open_calls = {TRIALS}\n\
         max_connections = {max_connections}\nbulkhead_wait = {}\n",
        CONNECT.as_secs_f64(),
        READ.as_secs_f64(),
        TOTAL.as_secs_f64(),
        SLOW.as_secs_f64(),
        OPEN.as_secs_f64(),
        BULKHEAD_WAIT.as_secs_f64(),
    );
    let settings = Settings::parse(&text, "fast_fail").expect("valid settings");
    let guards = Guards::builder(&settings).tracing(false).build();
    let guard = guards.get("upstream").expect("declared");
    let http = http_client(&guard.settings());
    let adapter = Arc::new(UpstreamAdapter::new(guard, http, &base));
    Arc::new(move || {
        let adapter = Arc::clone(&adapter);
        Box::pin(async move {
            match adapter.call().await {
                Ok(_) => Seen::Ok,
                Err(PortError::Unavailable(e)) => match e.cause() {
                    Cause::BulkheadFull { .. } => Seen::BulkheadFull,
                    _ if e.is_rejection() => Seen::Rejected,
                    _ => Seen::Failed,
                },
                Err(_) => Seen::Failed,
            }
        })
    })
}

/// recloser: a ring of 50 outcomes while closed (it judges only a full ring), the
/// failure rate, 30 s open, 3 half-open calls. No minimum below the ring, no slow calls.
fn recloser(base: String, rate: f64) -> Subject {
    let breaker = recloser::AsyncRecloser::from(
        recloser::Recloser::custom()
            .error_rate(rate as f32)
            .closed_len(WINDOW)
            .half_open_len(TRIALS)
            .open_wait(OPEN)
            .build(),
    );
    let http = client();
    Arc::new(move || {
        let (breaker, http, base) = (breaker.clone(), http.clone(), base.clone());
        Box::pin(async move {
            match breaker.call(timed_call(http, base)).await {
                Ok(_) => Seen::Ok,
                Err(recloser::Error::Rejected) => Seen::Rejected,
                Err(recloser::Error::Inner(_)) => Seen::Failed,
            }
        })
    })
}

/// failsafe: no count window; its success rate over a time window with at least 10
/// requests, open for a constant 30 s. No slow calls. Its window is [`FAILSAFE_WINDOW`],
/// which it reads as "the last outcome" (see there).
fn failsafe(base: String, rate: f64) -> Subject {
    let policy = failsafe::failure_policy::success_rate_over_time_window(
        1.0 - rate,
        MIN_CALLS as u32,
        FAILSAFE_WINDOW,
        failsafe::backoff::constant(OPEN),
    );
    let breaker = failsafe::Config::new().failure_policy(policy).build();
    let http = client();
    Arc::new(move || {
        let (breaker, http, base) = (breaker.clone(), http.clone(), base.clone());
        Box::pin(async move {
            match breaker.call(timed_call(http, base)).await {
                Ok(_) => Seen::Ok,
                Err(failsafe::Error::Rejected) => Seen::Rejected,
                Err(failsafe::Error::Inner(_)) => Seen::Failed,
            }
        })
    })
}

/// tower-resilience: a count window of 50, at least 10 calls, the failure rate, 30 s
/// open, 3 half-open calls, and its slow-call detection: calls over 300 ms are slow, and
/// a slow-call rate at the failure rate opens it. With a count window it judges nothing
/// until the window is full, whatever its minimum: it opens at the 51st call at the
/// earliest.
fn tower_resilience(base: String, rate: f64) -> Subject {
    let layer = tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .failure_rate_threshold(rate)
        .sliding_window_size(WINDOW)
        .minimum_number_of_calls(MIN_CALLS)
        .wait_duration_in_open(OPEN)
        .permitted_calls_in_half_open(TRIALS)
        .slow_call_duration_threshold(SLOW)
        .slow_call_rate_threshold(rate)
        .build()
        .expect("valid tower-resilience settings");
    let http = client();
    let service = layer.layer(tower::service_fn(move |()| {
        timed_call(http.clone(), base.clone())
    }));
    Arc::new(move || {
        let service = service.clone();
        Box::pin(async move {
            match service.oneshot(()).await {
                Ok(_) => Seen::Ok,
                Err(tower_resilience_circuitbreaker::CircuitBreakerError::OpenCircuit) => {
                    Seen::Rejected
                }
                Err(_) => Seen::Failed,
            }
        })
    })
}

/// What one subject's run measured.
#[derive(Default)]
struct Stats {
    issued: AtomicU64,
    alive: AtomicU64,
    max_alive: AtomicU64,
    rejected: AtomicU64,
    bulkhead_full: AtomicU64,
    /// At the first breaker rejection: (seconds, calls issued, upstream hits, max tasks).
    first_rejection: Mutex<Option<(f64, u64, u64, u64)>>,
    /// At the first bulkhead rejection: seconds.
    first_bulkhead: Mutex<Option<f64>>,
}

/// One subject's run: in a warm one, [`WARM_CALLS`] healthy calls at the same rate first
/// (not counted); then `mode` and [`RUN`] of measured traffic.
async fn run(subject: Subject, server: Arc<FakeUpstream>, mode: Mode, warm: bool) -> Arc<Stats> {
    let stats = Arc::new(Stats::default());
    let mut tick = tokio::time::interval(INTERVAL);
    if warm {
        server.always(Fault::Ok);
        let mut calls = Vec::new();
        for _ in 0..WARM_CALLS {
            tick.tick().await;
            calls.push(tokio::spawn(subject()));
        }
        for call in calls {
            let seen = call.await.expect("a call never panics");
            assert!(matches!(seen, Seen::Ok), "the warm-up calls succeed");
        }
    }
    server.set(mode);
    server.reset_counters();
    let start = Instant::now();
    while start.elapsed() < RUN {
        tick.tick().await;
        stats.issued.fetch_add(1, Ordering::SeqCst);
        let alive = stats.alive.fetch_add(1, Ordering::SeqCst) + 1;
        stats.max_alive.fetch_max(alive, Ordering::SeqCst);
        let (stats, subject, server) = (
            Arc::clone(&stats),
            Arc::clone(&subject),
            Arc::clone(&server),
        );
        tokio::spawn(async move {
            let seen = subject().await;
            match seen {
                Seen::Rejected => {
                    stats.rejected.fetch_add(1, Ordering::SeqCst);
                    let mut first = stats.first_rejection.lock().unwrap();
                    if first.is_none() {
                        *first = Some((
                            start.elapsed().as_secs_f64(),
                            stats.issued.load(Ordering::SeqCst),
                            server.hits(),
                            stats.max_alive.load(Ordering::SeqCst),
                        ));
                    }
                }
                Seen::BulkheadFull => {
                    stats.bulkhead_full.fetch_add(1, Ordering::SeqCst);
                    let mut first = stats.first_bulkhead.lock().unwrap();
                    first.get_or_insert(start.elapsed().as_secs_f64());
                }
                Seen::Ok | Seen::Failed => {}
            }
            stats.alive.fetch_sub(1, Ordering::SeqCst);
        });
    }
    // Let the calls still running end (hangs end at the 350 ms timeout).
    tokio::time::sleep(Duration::from_millis(600)).await;
    stats
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!(
        "| scenario | subject | first fast rejection | calls issued by then | upstream hits by then | max tasks piled up before it | over the whole {} s run: max tasks / breaker rejections / bulkhead rejections |",
        RUN.as_secs()
    );
    println!("|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    let runs = scenarios()
        .into_iter()
        .flat_map(|scenario| [false, true].map(|warm| (scenario.clone(), warm)));
    for (scenario, warm) in runs {
        let names = [
            "**ours, as the guide builds it** (bulkhead 8, wait 40 ms + breaker + slow check)",
            "ours, no bulkhead (max_connections 1000)",
            "recloser 1.4",
            "failsafe 1.3 (time window 100 ms)",
            "tower-resilience-circuitbreaker 0.14 (slow calls on)",
        ];
        let title = format!("{}, {}", scenario.name, if warm { "warm" } else { "cold" });
        let mut servers = Vec::new();
        for _ in names {
            servers.push(Arc::new(FakeUpstream::start().await));
        }
        let rate = scenario.rate;
        let subjects: Vec<Subject> = vec![
            ours(servers[0].url(), rate, 10),
            ours(servers[1].url(), rate, 1000),
            recloser(servers[2].url(), rate),
            failsafe(servers[3].url(), rate),
            tower_resilience(servers[4].url(), rate),
        ];
        let runs: Vec<_> = subjects
            .into_iter()
            .zip(&servers)
            .map(|(subject, server)| {
                tokio::spawn(run(subject, Arc::clone(server), scenario.mode, warm))
            })
            .collect();
        let mut firsts = Vec::new();
        for (name, run) in names.iter().zip(runs) {
            let stats = run.await.expect("a run never panics");
            let first = *stats.first_rejection.lock().unwrap();
            firsts.push(first.map(|(t, ..)| t));
            let (when, issued, hits, piled) = match first {
                Some((t, issued, hits, piled)) => (
                    format!("{t:.3} s"),
                    issued.to_string(),
                    hits.to_string(),
                    piled.to_string(),
                ),
                None => (
                    "never".to_owned(),
                    "–".to_owned(),
                    "–".to_owned(),
                    "–".to_owned(),
                ),
            };
            let bulkhead = match *stats.first_bulkhead.lock().unwrap() {
                Some(t) => format!(" (first at {t:.3} s)"),
                None => String::new(),
            };
            println!(
                "| {title} | {name} | {when} | {issued} | {hits} | {piled} | {} / {} / {}{bulkhead} |",
                stats.max_alive.load(Ordering::SeqCst),
                stats.rejected.load(Ordering::SeqCst),
                stats.bulkhead_full.load(Ordering::SeqCst),
            );
        }
        if scenario.slow {
            verdicts.push((title, firsts));
        }
    }
    println!();
    for (name, firsts) in verdicts {
        println!("{}", verdict(&name, &firsts));
    }
}

/// How ours with the bulkhead (`firsts[0]`) compares, in a scenario where the upstream
/// hangs or is slow, with ours without it plus `bulkhead_wait` (`firsts[1]`) and with
/// the fastest peer (`firsts[2..]`; never = infinitely slow).
fn verdict(scenario: &str, firsts: &[Option<f64>]) -> String {
    let never = f64::INFINITY;
    let ours = firsts[0].unwrap_or(never);
    let bare = firsts[1].unwrap_or(never) + BULKHEAD_WAIT.as_secs_f64();
    let peer = firsts[2..]
        .iter()
        .map(|t| t.unwrap_or(never))
        .fold(never, f64::min);
    let ratio = |a: f64, b: f64| {
        if b.is_finite() {
            format!("{:.2}×", a / b)
        } else {
            "never for them".to_owned()
        }
    };
    format!(
        "{scenario}: ours with the bulkhead {ours:.3} s = {} ours without it + bulkhead_wait ({}), {} the fastest peer ({}); {}",
        ratio(ours, bare),
        if ours <= bare { "ok" } else { "SLOWER" },
        ratio(ours, peer),
        if ours < peer { "faster" } else { "NOT FASTER" },
        if ours <= bare && ours < peer { "pass" } else { "FAIL" },
    )
}
