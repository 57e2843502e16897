//! Each system's hyper client, built from its settings: the hyper twin of
//! `outbound_guard_reqwest::client_builder`. [`connector`] is the system's TCP connector
//! (its `connect_timeout`, TCP keep-alive, no delay), [`client_builder`] its pooled
//! client (a keep-alive pool of `max_keepalive` idle connections), and the
//! [`GuardLayer`](crate::GuardLayer) guards the client, with
//! [`TransientHttp`](crate::TransientHttp) deciding which answers count (5xx, 408, 429
//! and every error of the client do; a 404 or a 422 does not):
//!
//! ```no_run
//! # async fn run(settings: &outbound_guard::Settings) -> Result<(), Box<dyn std::error::Error>> {
//! use bytes::Bytes;
//! use http_body_util::Empty;
//! use hyper_util::client::legacy::Client;
//! use outbound_guard::Guard;
//! use outbound_guard_tower::hyper_client::{client_builder, connector};
//! use outbound_guard_tower::{GuardLayer, GuardedError, TransientHttp};
//! use tower::{Layer, ServiceExt};
//!
//! let sber = settings.system("sber").expect("compiled against `sber`");
//! let client: Client<_, Empty<Bytes>> = client_builder(sber).build(connector(sber));
//! let sber_client = GuardLayer::new(Guard::new(sber))
//!     .failure_if(TransientHttp)
//!     .layer(client);
//!
//! let request = hyper::Request::get("http://sber.internal/v1/orders").body(Empty::new())?;
//! match sber_client.oneshot(request).await {
//!     Ok(response) => println!("{}", response.status()), // a 503 too: it counted
//!     Err(GuardedError::Guard(refused)) => println!("{refused}; retry in {:?}", refused.retry_after()),
//!     Err(GuardedError::Service(err)) => println!("{err}"), // refused, reset: it counted
//! }
//! # Ok(()) }
//! # fn main() {}
//! ```
//!
//! Which key the connector, the pool and the guard each enforce, and which none does
//! (`read_timeout`: hyper's client has no per-read timeout): the table in
//! [`outbound_guard::settings`](mod@outbound_guard::settings).
//!
//! What a caller sees of a hung upstream: with reqwest the call ends at `read_timeout`
//! as the client's error; with hyper nothing in the client ends it, and the guard's
//! `total_timeout` does: the call is cancelled (hyper closes its HTTP/1.1 connection
//! instead of pooling it), returned as `GuardedError::Guard` with
//! [`Cause::Timeout`](outbound_guard::Cause::Timeout), and counted as a failure. Set
//! `total_timeout` to the longest the system may take to answer. The response's
//! body is read after the guarded call has returned, outside `total_timeout`: read it
//! under `tokio::time::timeout`.
//!
//! TLS: wrap the connector in the service's TLS connector (hyper-rustls, hyper-tls)
//! after calling `enforce_http(false)` on it, as they require. Left enforced here, an
//! `https://` request on the plain connector fails at once ("scheme is not http")
//! instead of sending clear text to port 443.

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Builder;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use outbound_guard::SystemSettings;

/// Idle time before the first TCP keep-alive probe, and between probes: reqwest's
/// defaults, so both kinds of client notice a vanished peer alike.
const TCP_KEEPALIVE: Duration = Duration::from_secs(15);
/// Unanswered probes before the connection is given up: reqwest's default.
const TCP_KEEPALIVE_RETRIES: u32 = 3;

/// hyper's TCP connector for one system, with its settings applied:
///
/// - `connect_timeout` → [`HttpConnector::set_connect_timeout`] (divided evenly among
///   the addresses a name resolves to, as hyper does);
/// - TCP keep-alive probes after 15 s idle, every 15 s, 3 of them (reqwest's defaults);
/// - `TCP_NODELAY`, as reqwest sets it: a request goes out when written.
///
/// It accepts `http://` URIs only; see the [module](self) for TLS.
///
/// ```
/// let settings = outbound_guard::Settings::parse("[systems.sber]\nconnect_timeout = \"1s\"", "inline").unwrap();
/// let connector = outbound_guard_tower::hyper_client::connector(settings.system("sber").unwrap());
/// # let _ = connector;
/// ```
pub fn connector(settings: &SystemSettings) -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(settings.connect_timeout()));
    connector.set_keepalive(Some(TCP_KEEPALIVE));
    connector.set_keepalive_interval(Some(TCP_KEEPALIVE));
    connector.set_keepalive_retries(Some(TCP_KEEPALIVE_RETRIES));
    connector.set_nodelay(true);
    connector
}

/// hyper's pooled-client builder for one system, with its settings applied:
///
/// - `max_keepalive` → [`Builder::pool_max_idle_per_host`] (idle connections kept for
///   reuse; 0 keeps none);
/// - idle connections are closed after 90 s, as hyper's and reqwest's default (the
///   settings have no key for it), with tokio's timer, so the pool does evict them;
/// - tokio's executor for the connections' tasks, and tokio's timer for HTTP/2's.
///
/// No request-wide timeout: the whole call's bound, `total_timeout`, is the guard's.
/// Build the client with the system's [`connector`], once per system, and keep it in
/// that system's adapter:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use hyper_util::client::legacy::Client;
/// use outbound_guard_tower::hyper_client::{client_builder, connector};
///
/// let settings = outbound_guard::Settings::parse("[systems.sber]", "inline").unwrap();
/// let sber = settings.system("sber").unwrap();
/// let client: Client<_, http_body_util::Empty<bytes::Bytes>> =
///     client_builder(sber).http2_only(false).build(connector(sber));
/// # let _ = client;
/// # }
/// ```
pub fn client_builder(settings: &SystemSettings) -> Builder {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .pool_max_idle_per_host(settings.max_keepalive() as usize)
        .pool_idle_timeout(Duration::from_secs(90))
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new());
    builder
}

/// Whether an error of hyper's client says the system is in trouble, the rule
/// [`TransientHttp`](crate::TransientHttp) applies to it: every
/// error counts — a connect error, a connection closed or reset, a cancelled request —
/// except the caller's own mistakes, refused by the client before anything was sent (a
/// relative URI, a method or HTTP version it cannot send). Those would fail against any
/// system, so they must not open its breaker.
pub fn is_transient(error: &hyper_util::client::legacy::Error) -> bool {
    // hyper-util names its error kinds only in the message: `client error (UserAbsoluteUriRequired)`.
    !error.to_string().starts_with("client error (User")
}
