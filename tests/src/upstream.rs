//! Fake upstreams on 127.0.0.1 with faults switched at run time.
//!
//! [`FakeUpstream`] is an axum server whose every request first goes through its
//! [`Faults`]: any [`Fault`]s queued with [`Faults::script`] (one per request, in order),
//! then its [`Mode`], after an added latency. A request the faults let through is
//! answered by the server's app: `200 ok` on every path ([`FakeUpstream::start`]), or a
//! fake system's own routes ([`FakeUpstream::serve`], as the demo's fake Sber and
//! customer servers). The faults count the requests that reached the server and the
//! high-water mark of requests it was serving at once; `GET /_faults` reads them and
//! `PUT /_faults?fail_share=0.5&latency_ms=800` switches them by hand.
//! [`ResetServer`] is a raw TCP server that writes a response head promising a body,
//! then resets the connection. [`refused_addr`] is a port with nothing listening.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// What the server does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The app's answer (`200 OK` with the body `ok` for [`FakeUpstream::start`]), at once.
    Ok,
    /// This status (a 5xx for an outage), at once.
    Status(u16),
    /// The app's answer after this delay.
    Delay(Duration),
    /// Never answers: not a byte (until the server is dropped). A client's read timeout
    /// catches it.
    Hang,
    /// Answers `200 OK` at once, then sends one byte of body every interval, forever:
    /// each read succeeds, so only the guard's total timeout ends the call.
    Trickle(Duration),
}

/// How the server answers requests that no scripted fault is queued for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Every request gets this fault.
    Always(Fault),
    /// A share (0 to 1) of requests fail with `status`, drawn at random from a seeded
    /// generator (the same seed gives the same sequence); the rest are `Ok`.
    RandomShare {
        /// The share that fails.
        share: f64,
        /// The failing status.
        status: u16,
        /// The generator's seed.
        seed: u64,
    },
    /// A share (0 to 1, in thousandths) of requests fail with `status`, spread evenly,
    /// not drawn at random: with 0.5 every second request fails, so any three
    /// consecutive requests include a failure.
    EvenShare {
        /// The share that fails.
        share: f64,
        /// The failing status.
        status: u16,
    },
    /// Flapping health, by request count: `down` requests fail with `status`, then `up`
    /// requests succeed, over and over.
    Flap {
        /// Failing requests per cycle.
        down: u32,
        /// Healthy requests per cycle.
        up: u32,
        /// The failing status.
        status: u16,
    },
}

#[derive(Debug)]
struct Plan {
    mode: Mode,
    script: VecDeque<Fault>,
    rng: u64,
    served: u64,
}

impl Plan {
    fn next(&mut self) -> Fault {
        let n = self.served;
        self.served += 1;
        if let Some(fault) = self.script.pop_front() {
            return fault;
        }
        match self.mode {
            Mode::Always(fault) => fault,
            Mode::RandomShare { share, status, .. } => {
                // xorshift64*: small, seeded, good enough for a fault schedule.
                let mut x = self.rng;
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                self.rng = x;
                let draw =
                    (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
                if draw < share {
                    Fault::Status(status)
                } else {
                    Fault::Ok
                }
            }
            Mode::EvenShare { share, status } => {
                let permille = permille(share);
                if (n + 1) * permille / 1000 > n * permille / 1000 {
                    Fault::Status(status)
                } else {
                    Fault::Ok
                }
            }
            Mode::Flap { down, up, status } => {
                let cycle = u64::from(down) + u64::from(up);
                if cycle == 0 || n % cycle >= u64::from(down) {
                    Fault::Ok
                } else {
                    Fault::Status(status)
                }
            }
        }
    }
}

fn permille(share: f64) -> u64 {
    (share.clamp(0.0, 1.0) * 1000.0).round() as u64
}

/// A fake upstream's faults and counters, switchable while it runs (also from another
/// task: [`FakeUpstream::faults`] hands out a shared handle).
#[derive(Debug)]
pub struct Faults {
    plan: Mutex<Plan>,
    latency_us: AtomicU64,
    hits: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    paths: Mutex<VecDeque<String>>,
}

/// How many request targets [`Faults::paths`] keeps: the latest.
pub const PATHS_KEPT: usize = 1024;

impl Default for Faults {
    fn default() -> Self {
        Faults {
            plan: Mutex::new(Plan {
                mode: Mode::Always(Fault::Ok),
                script: VecDeque::new(),
                rng: 1,
                served: 0,
            }),
            latency_us: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
            paths: Mutex::new(VecDeque::new()),
        }
    }
}

impl Faults {
    fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers every request not scripted with `mode` from now on.
    pub fn set(&self, mode: Mode) {
        let mut plan = self.plan();
        if let Mode::RandomShare { seed, .. } = mode {
            plan.rng = seed.max(1);
        }
        plan.mode = mode;
        plan.served = 0;
    }

    /// Shorthand for `set(Mode::Always(fault))`.
    pub fn always(&self, fault: Fault) {
        self.set(Mode::Always(fault));
    }

    /// Fails `share` (0 to 1) of the requests from now on with HTTP 500, spread evenly
    /// ([`Mode::EvenShare`]).
    pub fn set_fail_share(&self, share: f64) {
        if permille(share) == 0 {
            self.always(Fault::Ok);
        } else {
            self.set(Mode::EvenShare { share, status: 500 });
        }
    }

    /// The share of requests failing now: that of [`Mode::EvenShare`] or
    /// [`Mode::RandomShare`], 1 for an `Always` failing status, 0 otherwise.
    pub fn fail_share(&self) -> f64 {
        match self.plan().mode {
            Mode::EvenShare { share, .. } => permille(share) as f64 / 1000.0,
            Mode::RandomShare { share, .. } => share,
            Mode::Always(Fault::Status(_)) => 1.0,
            Mode::Always(_) | Mode::Flap { .. } => 0.0,
        }
    }

    /// Delays every answer by `latency` from now on, before its fault applies.
    pub fn set_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.latency_us.store(micros, Ordering::Relaxed);
    }

    /// The added latency.
    pub fn latency(&self) -> Duration {
        Duration::from_micros(self.latency_us.load(Ordering::Relaxed))
    }

    /// No failures, no added latency, nothing scripted.
    pub fn heal(&self) {
        self.plan().script.clear();
        self.always(Fault::Ok);
        self.set_latency(Duration::ZERO);
    }

    /// Queues faults for the next requests, one each, before the mode applies again.
    pub fn script(&self, faults: impl IntoIterator<Item = Fault>) {
        self.plan().script.extend(faults);
    }

    /// Requests that reached the server (`/_faults` aside).
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }

    /// Requests being served right now.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The most requests it served at once since it started (or since
    /// [`reset_counters`](Self::reset_counters)).
    pub fn max_in_flight(&self) -> u64 {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// The request targets the server received, as they came on the wire (path and
    /// query, still percent-encoded), `/_faults` included: the latest [`PATHS_KEPT`].
    /// What a test reads to see that nothing reached a path it should not.
    pub fn paths(&self) -> Vec<String> {
        self.paths
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    fn record_path(&self, target: &str) {
        let mut paths = self
            .paths
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if paths.len() == PATHS_KEPT {
            paths.pop_front();
        }
        paths.push_back(target.to_owned());
    }

    /// Zeroes hits and the high-water mark.
    pub fn reset_counters(&self) {
        self.hits.store(0, Ordering::SeqCst);
        self.max_in_flight.store(self.in_flight(), Ordering::SeqCst);
    }

    /// Counts one request, waits the latency, and draws its fault.
    async fn admit(&self) -> Fault {
        self.hits.fetch_add(1, Ordering::SeqCst);
        let latency = self.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        self.plan().next()
    }
}

/// Decrements the in-flight count when the handler ends or is dropped.
struct InFlight<'a>(&'a Faults);

impl<'a> InFlight<'a> {
    fn enter(faults: &'a Faults) -> Self {
        let now = faults.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        faults.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(faults)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A fake upstream on 127.0.0.1: every request answered through its current faults.
/// Stopped when dropped.
#[derive(Debug)]
pub struct FakeUpstream {
    addr: SocketAddr,
    faults: Arc<Faults>,
    stop: Arc<Notify>,
    task: Option<JoinHandle<()>>,
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl FakeUpstream {
    /// Starts a healthy server (`Mode::Always(Fault::Ok)`) answering `200 ok` on every
    /// path, on an ephemeral port.
    ///
    /// # Panics
    ///
    /// If no port on 127.0.0.1 can be bound.
    pub async fn start() -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1:0");
        let app = Router::new().fallback(|| async { (StatusCode::OK, "ok") });
        Self::serve(listener, app).expect("a bound listener has an address")
    }

    /// Serves `app` on `listener`, every request of it through the server's faults
    /// (healthy to begin with); `/_faults` reads and switches them. Must be called
    /// within a tokio runtime.
    ///
    /// # Errors
    ///
    /// If the listener's address cannot be read.
    pub fn serve(listener: TcpListener, app: Router) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let faults = Arc::new(Faults::default());
        let stop = Arc::new(Notify::new());
        let router = app
            .layer(middleware::from_fn_with_state(Arc::clone(&faults), inject))
            .route(
                "/_faults",
                get(faults_get)
                    .put(faults_put)
                    .with_state(Arc::clone(&faults)),
            )
            .layer(middleware::from_fn_with_state(Arc::clone(&faults), record));
        let signal = Arc::clone(&stop);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { signal.notified().await })
                .await;
        });
        Ok(FakeUpstream {
            addr,
            faults,
            stop,
            task: Some(task),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its faults and counters.
    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    /// [`Faults::set`].
    pub fn set(&self, mode: Mode) {
        self.faults.set(mode);
    }

    /// [`Faults::always`].
    pub fn always(&self, fault: Fault) {
        self.faults.always(fault);
    }

    /// [`Faults::script`].
    pub fn script(&self, faults: impl IntoIterator<Item = Fault>) {
        self.faults.script(faults);
    }

    /// [`Faults::hits`].
    pub fn hits(&self) -> u64 {
        self.faults.hits()
    }

    /// [`Faults::in_flight`].
    pub fn in_flight(&self) -> u64 {
        self.faults.in_flight()
    }

    /// [`Faults::max_in_flight`].
    pub fn max_in_flight(&self) -> u64 {
        self.faults.max_in_flight()
    }

    /// [`Faults::reset_counters`].
    pub fn reset_counters(&self) {
        self.faults.reset_counters();
    }

    /// Stops accepting connections and closes idle ones (graceful shutdown), waiting at
    /// most `grace` for requests in progress; then the port refuses connections.
    pub async fn shutdown(&mut self, grace: Duration) {
        self.stop.notify_one();
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(grace, &mut task).await.is_err() {
                task.abort();
                let _ = task.await;
            }
        }
    }
}

/// Records every request's target, before routing (so `/_faults` too).
async fn record(State(faults): State<Arc<Faults>>, request: Request, next: Next) -> Response {
    let target = request.uri().path_and_query().map_or_else(
        || request.uri().path().to_owned(),
        |p| p.as_str().to_owned(),
    );
    faults.record_path(&target);
    next.run(request).await
}

/// The faults' middleware: a request reaches the app only when its fault lets it.
async fn inject(State(faults): State<Arc<Faults>>, request: Request, next: Next) -> Response {
    let _in_flight = InFlight::enter(&faults);
    match faults.admit().await {
        Fault::Ok => next.run(request).await,
        Fault::Status(code) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (status, "injected fault").into_response()
        }
        Fault::Delay(delay) => {
            tokio::time::sleep(delay).await;
            next.run(request).await
        }
        Fault::Hang => std::future::pending().await,
        Fault::Trickle(every) => {
            let stream = futures_util::stream::unfold((), move |()| async move {
                tokio::time::sleep(every).await;
                Some((Ok::<_, Infallible>(Bytes::from_static(b".")), ()))
            });
            (StatusCode::OK, Body::from_stream(stream)).into_response()
        }
    }
}

#[derive(Deserialize)]
struct FaultsQuery {
    fail_share: Option<f64>,
    latency_ms: Option<u64>,
}

fn faults_json(faults: &Faults) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "fail_share": faults.fail_share(),
        "latency_ms": faults.latency().as_millis() as u64,
        "hits": faults.hits(),
    }))
}

async fn faults_get(State(faults): State<Arc<Faults>>) -> Json<serde_json::Value> {
    faults_json(&faults)
}

async fn faults_put(
    State(faults): State<Arc<Faults>>,
    Query(q): Query<FaultsQuery>,
) -> Json<serde_json::Value> {
    if let Some(share) = q.fail_share {
        faults.set_fail_share(share);
    }
    if let Some(ms) = q.latency_ms {
        faults.set_latency(Duration::from_millis(ms));
    }
    faults_json(&faults)
}

/// A raw TCP server that reads a request, writes `200 OK` with a `Content-Length` of
/// 1000 and 7 bytes of body, then resets the connection: a reset mid-body.
#[derive(Debug)]
pub struct ResetServer {
    addr: SocketAddr,
    hits: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Drop for ResetServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ResetServer {
    /// Starts it on an ephemeral port.
    ///
    /// # Panics
    ///
    /// If no port on 127.0.0.1 can be bound.
    pub async fn start() -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let hits = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let counter = Arc::clone(&counter);
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\npartial";
                    let _ = socket.write_all(head).await;
                    let _ = socket.flush().await;
                    // RST instead of FIN: the client sees a reset, not a clean close.
                    let _ = socket.set_zero_linger();
                    drop(socket);
                });
            }
        });
        ResetServer { addr, hits, task }
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests it read (and reset).
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }
}

/// An address on 127.0.0.1 with nothing listening: connecting to it is refused.
///
/// # Panics
///
/// If no port can be bound to find one.
pub async fn refused_addr() -> SocketAddr {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    drop(listener);
    addr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn failures_are_spread_evenly() {
        let faults = Faults::default();
        faults.set_fail_share(0.5);
        let mut pattern = Vec::new();
        for _ in 0..6 {
            pattern.push(faults.admit().await != Fault::Ok);
        }
        assert_eq!(pattern, [false, true, false, true, false, true]);
        faults.set_fail_share(0.3);
        let mut failed = 0;
        for _ in 0..100 {
            failed += u32::from(faults.admit().await != Fault::Ok);
        }
        assert_eq!(failed, 30);
        faults.heal();
        assert_eq!(faults.admit().await, Fault::Ok);
        assert_eq!(faults.hits(), 107);
    }
}
