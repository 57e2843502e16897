//! The echo server: tonic on 127.0.0.1, a free port, each answer as the request asks.
//!
//! - `Echo` waits `delay_ms`, then answers `code` (0: the message back). An error is
//!   the handler's `Err`, which tonic sends as a trailers-only response: the status in
//!   the response headers; a request with `x-pushback-ms` metadata gets it back on its
//!   error as `grpc-retry-pushback-ms` (a server asking the client to back off).
//! - `Count` refuses at once with `code` when it is not 0 (trailers-only again), else
//!   streams `n` replies `interval_ms` apart and ends with `end_code`: an error after
//!   the messages travels in the trailers.
//!
//! Every call that reaches a handler is counted and its `grpc-timeout` header kept, so
//! a test can tell what got through the guard and what deadline the server was given.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tokio_stream::Stream;
use tonic::{Code, Request, Response, Status};

use crate::pb::echo_server::{Echo, EchoServer};
use crate::pb::{CountReply, CountRequest, EchoReply, EchoRequest};

/// A running echo server; stops when dropped.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    state: Arc<Seen>,
    task: JoinHandle<()>,
}

/// What the handlers saw, shared with the [`TestServer`] handle.
#[derive(Debug, Default)]
struct Seen {
    calls: AtomicU64,
    streams_abandoned: AtomicU64,
    grpc_timeouts: Mutex<Vec<Option<String>>>,
}

impl Seen {
    /// Counts a call that reached a handler; returns its number and the `grpc-timeout`
    /// it was sent with.
    fn arrive<T>(&self, request: &Request<T>) -> (u64, Option<String>) {
        let timeout = request
            .metadata()
            .get("grpc-timeout")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        self.grpc_timeouts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(timeout.clone());
        (self.calls.fetch_add(1, Ordering::SeqCst) + 1, timeout)
    }
}

impl TestServer {
    /// Starts a server on 127.0.0.1 and a port the system picks.
    ///
    /// # Errors
    ///
    /// When no port can be bound.
    pub async fn start() -> std::io::Result<TestServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Seen::default());
        let service = EchoServer::new(Handlers {
            state: Arc::clone(&state),
        });
        let task = tokio::spawn(async move {
            let served = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(TcpListenerStream::new(listener))
                .await;
            if let Err(error) = served {
                eprintln!("echo server stopped: {error}");
            }
        });
        Ok(TestServer { addr, state, task })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its URL, for a system's `base_url`: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many calls reached a handler (refused calls never do).
    pub fn calls(&self) -> u64 {
        self.state.calls.load(Ordering::SeqCst)
    }

    /// How many `Count` streams lost their client before their end: cut by a deadline
    /// or dropped by the caller.
    pub fn streams_abandoned(&self) -> u64 {
        self.state.streams_abandoned.load(Ordering::SeqCst)
    }

    /// The `grpc-timeout` header of every call that reached a handler, in order, as
    /// sent (`None` for a call without one).
    pub fn grpc_timeouts(&self) -> Vec<Option<String>> {
        self.state
            .grpc_timeouts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The deadline the last call was sent with, read from its `grpc-timeout`.
    pub fn last_grpc_timeout(&self) -> Option<Duration> {
        self.grpc_timeouts()
            .last()
            .cloned()
            .flatten()
            .and_then(|value| parse_grpc_timeout(&value))
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads a `grpc-timeout` header value (`100m`, `2S`, `1500000u`: at most 8 digits and
/// a unit of `H`, `M`, `S`, `m`, `u` or `n`) as a duration.
///
/// ```
/// use std::time::Duration;
/// use grpc_echo_example::parse_grpc_timeout;
///
/// assert_eq!(parse_grpc_timeout("250m"), Some(Duration::from_millis(250)));
/// assert_eq!(parse_grpc_timeout("1500000u"), Some(Duration::from_millis(1500)));
/// assert_eq!(parse_grpc_timeout("5x"), None);
/// ```
pub fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// The service's handlers.
struct Handlers {
    state: Arc<Seen>,
}

/// The status a request asked for.
fn asked(code: i32, what: &str) -> Status {
    let code = Code::from(code);
    Status::new(code, format!("{what} answered {code:?} as asked"))
}

type CountStream = Pin<Box<dyn Stream<Item = Result<CountReply, Status>> + Send>>;

#[tonic::async_trait]
impl Echo for Handlers {
    async fn echo(&self, request: Request<EchoRequest>) -> Result<Response<EchoReply>, Status> {
        let (call, grpc_timeout) = self.state.arrive(&request);
        let pushback = request.metadata().get("x-pushback-ms").cloned();
        let request = request.into_inner();
        if request.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(request.delay_ms.into())).await;
        }
        if request.code != 0 {
            let mut status = asked(request.code, "echo");
            if let Some(ms) = pushback {
                status.metadata_mut().insert("grpc-retry-pushback-ms", ms);
            }
            return Err(status);
        }
        Ok(Response::new(EchoReply {
            message: request.message,
            grpc_timeout: grpc_timeout.unwrap_or_default(),
            call,
        }))
    }

    type CountStream = CountStream;

    async fn count(
        &self,
        request: Request<CountRequest>,
    ) -> Result<Response<Self::CountStream>, Status> {
        let (_, grpc_timeout) = self.state.arrive(&request);
        let request = request.into_inner();
        if request.code != 0 {
            return Err(asked(request.code, "count"));
        }
        let (replies, stream) = mpsc::channel(1);
        let state = Arc::clone(&self.state);
        let grpc_timeout = grpc_timeout.unwrap_or_default();
        tokio::spawn(async move {
            let interval = Duration::from_millis(request.interval_ms.into());
            for i in 1..=request.n {
                if i > 1 {
                    tokio::time::sleep(interval).await;
                }
                let reply = CountReply {
                    i,
                    grpc_timeout: grpc_timeout.clone(),
                };
                if replies.send(Ok(reply)).await.is_err() {
                    state.streams_abandoned.fetch_add(1, Ordering::SeqCst);
                    return;
                }
            }
            if request.end_code != 0 {
                // The client may be gone already; the end is then nobody's to read.
                let _ = replies.send(Err(asked(request.end_code, "count"))).await;
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(stream))))
    }
}
