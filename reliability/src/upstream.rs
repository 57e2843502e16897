//! Fake upstreams on 127.0.0.1 with faults switched at run time.
//!
//! [`FakeUpstream`] is an axum server that answers every path according to its
//! [`Mode`], after first serving any [`Fault`]s queued with [`FakeUpstream::script`]
//! (one per request, in order). It counts the requests that reached it and the
//! high-water mark of requests it was serving at once. [`ResetServer`] is a raw TCP
//! server that writes a response head promising a body, then resets the connection.
//! [`refused_addr`] is a port with nothing listening.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// What the server does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `200 OK` with the body `ok`, at once.
    Ok,
    /// This status (a 5xx for an outage), at once.
    Status(u16),
    /// `200 OK` after this delay.
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

/// The server's faults and counters, shared with its handler.
#[derive(Debug)]
struct Shared {
    plan: Mutex<Plan>,
    hits: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

impl Shared {
    fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Decrements the in-flight count when the handler ends or is dropped.
struct InFlight<'a>(&'a Shared);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A fake upstream on 127.0.0.1: every path answered by its current faults.
/// Stopped when dropped.
#[derive(Debug)]
pub struct FakeUpstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
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
    /// Starts a healthy server (`Mode::Always(Fault::Ok)`) on an ephemeral port.
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
        let shared = Arc::new(Shared {
            plan: Mutex::new(Plan {
                mode: Mode::Always(Fault::Ok),
                script: VecDeque::new(),
                rng: 1,
                served: 0,
            }),
            hits: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
        });
        let stop = Arc::new(Notify::new());
        let router = Router::new().fallback({
            let shared = Arc::clone(&shared);
            move || handle(Arc::clone(&shared))
        });
        let signal = Arc::clone(&stop);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { signal.notified().await })
                .await;
        });
        FakeUpstream {
            addr,
            shared,
            stop,
            task: Some(task),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers every request not scripted with `mode` from now on.
    pub fn set(&self, mode: Mode) {
        let mut plan = self.shared.plan();
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

    /// Queues faults for the next requests, one each, before the mode applies again.
    pub fn script(&self, faults: impl IntoIterator<Item = Fault>) {
        self.shared.plan().script.extend(faults);
    }

    /// Requests that reached the server.
    pub fn hits(&self) -> u64 {
        self.shared.hits.load(Ordering::SeqCst)
    }

    /// Requests being served right now.
    pub fn in_flight(&self) -> u64 {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// The most requests it served at once since it started (or since
    /// [`reset_counters`](Self::reset_counters)).
    pub fn max_in_flight(&self) -> u64 {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// Zeroes hits and the high-water mark.
    pub fn reset_counters(&self) {
        self.shared.hits.store(0, Ordering::SeqCst);
        self.shared
            .max_in_flight
            .store(self.in_flight(), Ordering::SeqCst);
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

async fn handle(shared: Arc<Shared>) -> Response {
    shared.hits.fetch_add(1, Ordering::SeqCst);
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let _in_flight = InFlight(&shared);
    let fault = shared.plan().next();
    match fault {
        Fault::Ok => (StatusCode::OK, "ok").into_response(),
        Fault::Status(code) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (status, "injected fault").into_response()
        }
        Fault::Delay(delay) => {
            tokio::time::sleep(delay).await;
            (StatusCode::OK, "ok").into_response()
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
