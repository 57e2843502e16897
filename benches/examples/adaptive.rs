//! The adaptive bulkhead against the fixed one on a real upstream whose capacity
//! changes: a loopback HTTP server of N workers and a queue (each request waits for a
//! worker, then takes the service time), so its latency grows with the requests in
//! flight past its workers, under more callers than it can serve.
//!
//! `cargo run -p outbound-guard-benches --release --example adaptive [SHAPE...]` prints,
//! per shape and subject (ours fixed, ours adaptive, and tower-resilience-adaptive
//! 0.14's Vegas limiter in front of ours fixed), one markdown row per phase: goodput (successes a second)
//! against the upstream's capacity, p50/p99 of successes once admitted (and the p99 of
//! those from the phase's third second on, past the calls the change itself delayed)
//! and from the caller's start (the bulkhead's wait included), refusals by kind, failures (the HTTP
//! client's 600 ms read timeout), breaker openings, the limit's range, and how long
//! after the phase began goodput first held 90% of the capacity for a second.
//!
//! Shapes (`drop` by default; `all` for every one):
//! - `drop`: 100 ms a call, 8 workers for 20 s, 2 for 40 s, 8 for 20 s; 32 callers;
//! - `fast`: the same at 30 ms a call;
//! - `decline`: 100 ms, 8 workers for 10 s, one fewer every 5 s down to 2, 2 for 20 s,
//!   8 again for 20 s; 32 callers;
//! - `crowd`: `drop` with 96 callers.
//!
//! Subjects: `fixed`, `adaptive` and `vegas` among the arguments run only those (all
//! three by default).
//!
//! Settings: the guide's defaults (8 permits, `bulkhead_wait` 2 s, window 50, at least
//! 10 calls, 50%, open 30 s) but `read_timeout = "600ms"` (slow above 300 ms), as in the
//! run that showed the fixed bulkhead's metastable failure, and `connect_timeout =
//! "300ms"` (it must be under the read timeout; `bulkhead_wait` is set to its default's
//! 2 s). A caller refused waits 10 ms
//! before its next call.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use outbound_guard::{Cause, Guard, Observer, Settings, State, Transition};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// The upstream: workers (a fair semaphore), its capacity, its service time.
struct Upstream {
    workers: Semaphore,
    capacity: AtomicUsize,
    service_ms: AtomicU64,
}

impl Upstream {
    fn set_workers(self: &Arc<Self>, workers: usize) {
        let old = self.capacity.swap(workers, Ordering::SeqCst);
        if workers > old {
            self.workers.add_permits(workers - old);
        } else {
            let owed = old - workers - self.workers.forget_permits(old - workers);
            if owed > 0 {
                let upstream = Arc::clone(self);
                tokio::spawn(async move {
                    let owed = u32::try_from(owed).unwrap();
                    upstream.workers.acquire_many(owed).await.unwrap().forget();
                });
            }
        }
    }
}

/// Serves one keep-alive connection: each request head read, a worker, the service time,
/// `200 ok`.
async fn connection(mut socket: tokio::net::TcpStream, upstream: Arc<Upstream>) {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let end = buffer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        buffer.drain(..end);
        let worker = upstream.workers.acquire().await.unwrap();
        let service = Duration::from_millis(upstream.service_ms.load(Ordering::SeqCst));
        tokio::time::sleep(service).await;
        drop(worker);
        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        if socket.write_all(answer).await.is_err() {
            return;
        }
    }
}

async fn serve(upstream: Arc<Upstream>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                continue;
            };
            let _ = socket.set_nodelay(true);
            tokio::spawn(connection(socket, Arc::clone(&upstream)));
        }
    });
    format!("http://{addr}/")
}

/// Breaker openings.
#[derive(Default)]
struct Openings(AtomicU64);

impl Observer for Openings {
    fn on_transition(&self, t: &Transition<'_>) {
        if t.to == State::Open {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// What stands between the callers and the upstream.
#[derive(Clone, Copy, PartialEq)]
enum Subject {
    /// Our guard, `bulkhead = "fixed"` (the guide's 8 permits).
    Fixed,
    /// Our guard, `bulkhead = "adaptive"`.
    Adaptive,
    /// tower-resilience-adaptive 0.14's Vegas limiter (initial 8, from 1 to 8), a
    /// caller waiting at most `bulkhead_wait` for it, in front of our guard with the
    /// fixed bulkhead.
    Vegas,
}

impl Subject {
    /// The argument that picks it.
    fn arg(self) -> &'static str {
        match self {
            Subject::Fixed => "fixed",
            Subject::Adaptive => "adaptive",
            Subject::Vegas => "vegas",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Subject::Fixed => "fixed",
            Subject::Adaptive => "adaptive",
            Subject::Vegas => "tower-resilience-adaptive Vegas",
        }
    }
}

/// One call's end, seconds since the run began.
#[derive(Clone, Copy)]
enum End {
    /// Succeeded: `(end, admitted latency, latency from the caller's start)`.
    Ok(f64, f64, f64),
    BulkheadFull(f64),
    Open(f64),
    Failed(f64),
}

struct Shape {
    name: &'static str,
    service_ms: u64,
    callers: usize,
    /// `(from second, workers)`.
    plan: Vec<(u64, usize)>,
    /// Phases reported: `(name, from second, to second)`.
    phases: Vec<(&'static str, u64, u64)>,
}

fn shapes() -> Vec<Shape> {
    let drop = |name, service_ms, callers| Shape {
        name,
        service_ms,
        callers,
        plan: vec![(0, 8), (20, 2), (60, 8)],
        phases: vec![
            ("8 workers", 0, 20),
            ("2 workers", 20, 60),
            ("8 again", 60, 80),
        ],
    };
    let mut decline = drop("decline", 100, 32);
    decline.plan = vec![
        (0, 8),
        (10, 7),
        (15, 6),
        (20, 5),
        (25, 4),
        (30, 3),
        (35, 2),
        (60, 8),
    ];
    decline.phases = vec![
        ("8 workers", 0, 10),
        ("8 → 2, −1 per 5 s", 10, 40),
        ("2 workers", 40, 60),
        ("8 again", 60, 80),
    ];
    vec![
        drop("drop", 100, 32),
        drop("fast", 30, 32),
        decline,
        drop("crowd", 100, 96),
    ]
}

fn settings(subject: Subject) -> Settings {
    let kind = if subject == Subject::Adaptive {
        "adaptive"
    } else {
        "fixed"
    };
    Settings::parse(
        &format!(
            "[systems.upstream]\nconnect_timeout = \"300ms\"\nread_timeout = \"600ms\"\n\
             bulkhead_wait = \"2s\"\nbulkhead = \"{kind}\"\n"
        ),
        "adaptive.rs",
    )
    .unwrap()
}

/// How one call through `guard` ended, at `at` seconds, started at `start`.
type Answer = Result<Result<usize, reqwest::Error>, outbound_guard::CircuitBreakerError>;

fn judged(answer: Answer, at: f64, start: Instant, admitted: Instant, now: Instant) -> End {
    match answer {
        Ok(Ok(_)) => End::Ok(
            at,
            (now - admitted).as_secs_f64(),
            (now - start).as_secs_f64(),
        ),
        Err(refused) if matches!(refused.cause(), Cause::BulkheadFull { .. }) => {
            End::BulkheadFull(at)
        }
        Err(refused) if refused.is_rejection() => End::Open(at),
        Ok(Err(_)) | Err(_) => End::Failed(at),
    }
}

/// One call through `guard`: its answer and when it was admitted.
async fn call(guard: &Guard, client: &reqwest::Client, url: &str) -> (Answer, Instant) {
    let admitted = Mutex::new(Instant::now());
    let answer = guard
        .call(async {
            *admitted.lock().unwrap() = Instant::now();
            client
                .get(url)
                .send()
                .await?
                .error_for_status()?
                .bytes()
                .await
                .map(|body| body.len())
        })
        .await;
    let admitted = *admitted.lock().unwrap();
    (answer, admitted)
}

type Peer = tower_resilience_adaptive::AdaptiveService<
    tower::util::BoxCloneSyncService<(), (Answer, Instant), Answer>,
    tower_resilience_adaptive::Vegas,
>;

/// The peer's limiter in front of `guard`: a call the guard refused or that failed is a
/// failure to it.
fn peer(guard: &Guard, client: &reqwest::Client, url: &str) -> Peer {
    let (guard, client, url) = (guard.clone(), client.clone(), url.to_owned());
    let inner = tower::service_fn(move |()| {
        let (guard, client, url) = (guard.clone(), client.clone(), url.clone());
        async move {
            let (answer, admitted) = call(&guard, &client, &url).await;
            match answer {
                Ok(Ok(body)) => Ok((Ok(Ok(body)), admitted)),
                other => Err(other),
            }
        }
    });
    let vegas = tower_resilience_adaptive::Vegas::builder()
        .initial_limit(8)
        .min_limit(1)
        .max_limit(8)
        .build()
        .unwrap();
    tower_resilience_adaptive::AdaptiveService::new(
        tower::util::BoxCloneSyncService::new(inner),
        Arc::new(vegas),
    )
}

/// One call through the peer's limiter, waiting at most `wait` for it (then refused
/// as a full bulkhead).
async fn through_peer(peer: &Peer, wait: Duration, start: Instant) -> (Answer, Instant) {
    let mut peer = peer.clone();
    if let Ok(Ok(_)) = tokio::time::timeout(wait, tower::ServiceExt::ready(&mut peer)).await {
        match tower::Service::call(&mut peer, ()).await {
            Ok(done) => done,
            Err(tower_resilience_adaptive::AdaptiveError::Service(answer)) => (answer, start),
            Err(_) => unreachable!("the peer refuses by waiting"),
        }
    } else {
        let cause = Cause::BulkheadFull {
            permits: 8,
            waited: wait,
        };
        let refused = outbound_guard::CircuitBreakerError::from_cause("upstream", cause);
        (Err(refused), start)
    }
}

/// Runs `shape` through `subject`: every call's end, the openings, and the limit
/// sampled every 100 ms.
async fn run(shape: &Shape, subject: Subject) -> (Vec<End>, u64, Vec<(f64, usize)>) {
    let upstream = Arc::new(Upstream {
        workers: Semaphore::new(shape.plan[0].1),
        capacity: AtomicUsize::new(shape.plan[0].1),
        service_ms: AtomicU64::new(shape.service_ms),
    });
    let url = serve(Arc::clone(&upstream)).await;
    let openings = Arc::new(Openings::default());
    let settings = settings(subject);
    let system = settings.system("upstream").unwrap();
    let guard = Guard::builder(system)
        .observer(Arc::clone(&openings) as Arc<dyn Observer>)
        .build();
    let client = reqwest::Client::builder()
        .connect_timeout(system.connect_timeout())
        .read_timeout(system.read_timeout())
        .pool_max_idle_per_host(system.max_keepalive() as usize)
        .build()
        .unwrap();
    let peer = peer(&guard, &client, &url);
    let wait = system.bulkhead_wait();
    let t0 = Instant::now();
    let length = shape.plan.iter().map(|p| p.0).max().unwrap() + 20;
    let until = t0 + Duration::from_secs(length);
    let ends = Arc::new(Mutex::new(Vec::new()));
    let callers: Vec<_> = (0..shape.callers)
        .map(|_| {
            let (guard, client, url, ends) = (
                guard.clone(),
                client.clone(),
                url.clone(),
                Arc::clone(&ends),
            );
            let peer = peer.clone();
            tokio::spawn(async move {
                while Instant::now() < until {
                    let start = Instant::now();
                    let (answer, admitted) = if subject == Subject::Vegas {
                        through_peer(&peer, wait, start).await
                    } else {
                        call(&guard, &client, &url).await
                    };
                    let now = Instant::now();
                    let end = judged(answer, (now - t0).as_secs_f64(), start, admitted, now);
                    let refused = matches!(end, End::BulkheadFull(_) | End::Open(_));
                    ends.lock().unwrap().push(end);
                    if refused {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            })
        })
        .collect();
    let mut limits = Vec::new();
    let mut plan = shape.plan.iter().skip(1).peekable();
    while Instant::now() < until {
        let at = t0.elapsed().as_secs_f64();
        while let Some(&&(from, workers)) = plan.peek() {
            if at < from as f64 {
                break;
            }
            upstream.set_workers(workers);
            plan.next();
        }
        let limit = match subject {
            Subject::Vegas => peer.limit(),
            _ => guard.bulkhead_limit(),
        };
        limits.push((at, limit));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for caller in callers {
        caller.await.unwrap();
    }
    let ends = std::mem::take(&mut *ends.lock().unwrap());
    (ends, openings.0.load(Ordering::SeqCst), limits)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

/// The upstream's capacity (calls a second) at second `t`.
fn capacity(shape: &Shape, t: f64) -> f64 {
    let workers = shape.plan.iter().rev().find(|p| p.0 as f64 <= t).unwrap().1;
    workers as f64 * 1000.0 / shape.service_ms as f64
}

fn report(shape: &Shape, kind: &str, ends: &[End], openings: u64, limits: &[(f64, usize)]) {
    for &(phase, from, to) in &shape.phases {
        let within = |t: f64| t >= from as f64 && t < to as f64;
        let (mut admitted, mut whole) = (Vec::new(), Vec::new());
        // Once admitted, from the phase's third second on: past the change's own calls.
        let mut later = Vec::new();
        let (mut full, mut open, mut failed) = (0, 0, 0);
        // Successes per second of the phase, for the settle time.
        let mut per_second = vec![0u32; (to - from) as usize];
        for end in ends {
            match *end {
                End::Ok(t, a, w) if within(t) => {
                    admitted.push(a * 1000.0);
                    if t >= from as f64 + 2.0 {
                        later.push(a * 1000.0);
                    }
                    whole.push(w * 1000.0);
                    per_second[(t - from as f64) as usize] += 1;
                }
                End::BulkheadFull(t) if within(t) => full += 1,
                End::Open(t) if within(t) => open += 1,
                End::Failed(t) if within(t) => failed += 1,
                _ => {}
            }
        }
        admitted.sort_by(f64::total_cmp);
        later.sort_by(f64::total_cmp);
        whole.sort_by(f64::total_cmp);
        let seconds = (to - from) as f64;
        let mean: f64 = (from..to)
            .map(|s| capacity(shape, s as f64 + 0.5))
            .sum::<f64>()
            / seconds;
        let goodput = admitted.len() as f64 / seconds;
        let capacity_at = |s: usize| capacity(shape, (from + s as u64) as f64 + 0.5);
        let settled = per_second
            .iter()
            .enumerate()
            .position(|(s, &n)| f64::from(n) >= 0.9 * capacity_at(s))
            .map_or("never".to_owned(), |s| format!("{s} s"));
        let (low, high) = limits
            .iter()
            .filter(|(t, _)| within(*t))
            .fold((usize::MAX, 0), |(l, h), &(_, x)| (l.min(x), h.max(x)));
        println!(
            "| {} | {kind} | {phase} | {mean:.0}/s | {goodput:.1}/s ({:.0}%) | {:.0} / {:.0} ({:.0}) ms | {:.0} / {:.0} ms | {full} | {open} | {failed} | {low}–{high} | {settled} |",
            shape.name,
            100.0 * goodput / mean,
            quantile(&admitted, 0.5),
            quantile(&admitted, 0.99),
            quantile(&later, 0.99),
            quantile(&whole, 0.5),
            quantile(&whole, 0.99),
        );
    }
    println!(
        "| {} | {kind} | whole run | | | | | | | | openings: {openings} | |",
        shape.name
    );
}

#[tokio::main]
async fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let all = wanted.iter().any(|w| w == "all");
    let subjects: Vec<Subject> = [Subject::Fixed, Subject::Adaptive, Subject::Vegas]
        .into_iter()
        .filter(|s| wanted.iter().any(|w| *w == s.arg()))
        .collect();
    let subjects = if subjects.is_empty() {
        vec![Subject::Fixed, Subject::Adaptive, Subject::Vegas]
    } else {
        subjects
    };
    let shape_named = |w: &String| shapes().iter().any(|s| s.name == w);
    println!("| shape | bulkhead | phase | capacity | goodput | p50 / p99 (from 2 s) admitted | p50 / p99 from the start | bulkhead full | breaker open | failed | limit | 90% of capacity after |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for shape in shapes() {
        let chosen = if wanted.iter().any(|w| all || shape_named(w)) {
            all || wanted.iter().any(|w| w == shape.name)
        } else {
            shape.name == "drop"
        };
        if !chosen {
            continue;
        }
        for &subject in &subjects {
            let (ends, openings, limits) = run(&shape, subject).await;
            report(&shape, subject.name(), &ends, openings, &limits);
        }
    }
}
