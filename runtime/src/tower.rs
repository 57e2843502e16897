//! A tower [`Layer`] that runs every call of a [`Service`] through a system's
//! [`Guard`] (feature `tower`): for adapters that wrap a generated client (tonic, a
//! hyper client stack), guarded without an attribute on each call.
//!
//! The outcome rules are the attribute's: bulkhead, breaker, total timeout, elapsed
//! check; which results count as failures is decided by a classifier over the whole
//! `Result` (so an HTTP 503 answer can count while a 404 does not), the tower form of
//! `failure_if`; by default every `Err` counts.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use outbound_guard::tower::{GuardLayer, GuardedError};
//! use outbound_guard::{Guard, Settings};
//! use tower::{service_fn, Layer, Service, ServiceExt};
//!
//! let settings = Settings::parse("[systems.sber]", "inline").unwrap();
//! let guard = Guard::new(settings.system("sber").unwrap());
//! let layer = GuardLayer::new(guard.clone())
//!     // A status of 500 or more counts against the breaker; the rest is an answer.
//!     .failure_if(|result: &Result<u16, std::io::Error>| matches!(result, Ok(s) if *s >= 500) || result.is_err());
//! let mut client = layer.layer(service_fn(|status: u16| async move { Ok::<_, std::io::Error>(status) }));
//!
//! let status = client.ready().await.unwrap().call(503).await.unwrap();
//! assert_eq!(status, 503); // returned as it came...
//! assert_eq!(guard.breaker().snapshot().failures, 1); // ...and counted as a failure
//!
//! guard.breaker().force_open();
//! let refused = client.ready().await.unwrap().call(200).await.unwrap_err();
//! assert!(matches!(refused, GuardedError::Guard(_)));
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::call::CallOptions;
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

/// Wraps a service in a system's guard; see the [module](self).
#[derive(Debug, Clone)]
pub struct GuardLayer<C = EveryError> {
    guard: Guard,
    failure_if: C,
    slow_as_error: bool,
}

/// The default classifier: every `Err` of the service counts as a failure, every `Ok`
/// as a success.
#[derive(Debug, Clone, Copy, Default)]
pub struct EveryError;

/// Decides whether a service's result counts against the breaker. Implemented for
/// closures `Fn(&Result<Response, Error>) -> bool` and for [`EveryError`].
pub trait Classify<R, E> {
    /// Whether `result` counts as a failure.
    fn is_failure(&self, result: &Result<R, E>) -> bool;
}

impl<R, E> Classify<R, E> for EveryError {
    fn is_failure(&self, result: &Result<R, E>) -> bool {
        result.is_err()
    }
}

impl<R, E, F> Classify<R, E> for F
where
    F: Fn(&Result<R, E>) -> bool,
{
    fn is_failure(&self, result: &Result<R, E>) -> bool {
        self(result)
    }
}

impl GuardLayer {
    /// Every call through `guard`; every `Err` counts as a failure.
    pub fn new(guard: Guard) -> Self {
        GuardLayer {
            guard,
            failure_if: EveryError,
            slow_as_error: false,
        }
    }
}

impl<C> GuardLayer<C> {
    /// Counts a result as a failure when `classify` says so (run when the call ends,
    /// inside the guard: a panic in it is recorded as a failure and goes on unwinding).
    pub fn failure_if<D>(self, classify: D) -> GuardLayer<D> {
        GuardLayer {
            guard: self.guard,
            failure_if: classify,
            slow_as_error: self.slow_as_error,
        }
    }

    /// Returns a slow successful call as [`Cause::Slow`](crate::Cause::Slow) instead of
    /// its response.
    #[must_use]
    pub fn slow_as_error(mut self) -> Self {
        self.slow_as_error = true;
        self
    }
}

impl<S, C: Clone> Layer<S> for GuardLayer<C> {
    type Service = GuardService<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        GuardService {
            inner,
            guard: self.guard.clone(),
            failure_if: self.failure_if.clone(),
            slow_as_error: self.slow_as_error,
        }
    }
}

/// A service whose calls go through a guard; built by [`GuardLayer`].
#[derive(Debug, Clone)]
pub struct GuardService<S, C = EveryError> {
    inner: S,
    guard: Guard,
    failure_if: C,
    slow_as_error: bool,
}

/// The error of a guarded service: the guard's, or the service's own.
#[derive(Debug)]
pub enum GuardedError<E> {
    /// The guard refused the call or cut it short.
    Guard(CircuitBreakerError),
    /// The service's own error.
    Service(E),
}

impl<E: fmt::Display> fmt::Display for GuardedError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuardedError::Guard(e) => e.fmt(f),
            GuardedError::Service(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for GuardedError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GuardedError::Guard(e) => Some(e),
            GuardedError::Service(e) => Some(e),
        }
    }
}

/// The future of a [`GuardService`] call.
pub type GuardFuture<R, E> = Pin<Box<dyn Future<Output = Result<R, GuardedError<E>>> + Send>>;

impl<S, C, Req> Service<Req> for GuardService<S, C>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    C: Classify<S::Response, S::Error> + Clone + Send + Sync + 'static,
    Req: Send + 'static,
{
    type Response = S::Response;
    type Error = GuardedError<S::Error>;
    type Future = GuardFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(GuardedError::Service)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // The service made ready is the one that must take the call: keep it, leave a
        // clone for the next `poll_ready`. The request is only handed over once the
        // guard has admitted the call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let guard = self.guard.clone();
        let classify = self.failure_if.clone();
        let mut options = CallOptions::new();
        if self.slow_as_error {
            options = options.slow_as_error();
        }
        Box::pin(async move {
            // `Ok`: the call counts as a success, `Err`: as a failure; either way the
            // service's own result is inside.
            let judged = guard
                .call_with(options, async move {
                    let result = inner.call(request).await;
                    if classify.is_failure(&result) {
                        Err(result)
                    } else {
                        Ok(result)
                    }
                })
                .await;
            match judged {
                Ok(Ok(result) | Err(result)) => result.map_err(GuardedError::Service),
                Err(error) => Err(GuardedError::Guard(error)),
            }
        })
    }
}

/// The transient classification for HTTP services (`http::Response<B>`), ready-made:
/// an answer with a 5xx, 408 or 429 status counts as a failure, any other answer does
/// not (a 404 or a 422 is the system working), and every `Err` of the service counts
/// (a transport error of a hyper or tonic client: refused, reset, timed out). The
/// status rule of Microsoft.Extensions.Http.Resilience's transient predicate, and of
/// `outbound_guard::http::is_transient_status` (feature `reqwest`). With the `reqwest`
/// feature it also classifies `reqwest::Client` as a service: an `Err` then counts only
/// when `outbound_guard::http::is_transient` says so.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::tower::{GuardLayer, TransientHttp};
/// use outbound_guard::{Guard, Settings};
/// use tower::{service_fn, Layer, Service, ServiceExt};
///
/// let settings = Settings::parse("[systems.sber]", "inline").unwrap();
/// let guard = Guard::new(settings.system("sber").unwrap());
/// let layer = GuardLayer::new(guard.clone()).failure_if(TransientHttp);
/// let mut client = layer.layer(service_fn(|status: u16| async move {
///     Ok::<_, std::io::Error>(http::Response::builder().status(status).body(()).unwrap())
/// }));
/// client.ready().await.unwrap().call(404).await.unwrap();
/// assert_eq!(guard.breaker().snapshot().failures, 0); // an answer
/// client.ready().await.unwrap().call(503).await.unwrap();
/// assert_eq!(guard.breaker().snapshot().failures, 1); // the system in trouble
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TransientHttp;

impl<B, E> Classify<http::Response<B>, E> for TransientHttp {
    fn is_failure(&self, result: &Result<http::Response<B>, E>) -> bool {
        match result {
            Ok(response) => crate::status::is_transient(response.status().as_u16()),
            Err(_) => true,
        }
    }
}

/// `reqwest::Client` is a tower `Service`: guarded by a [`GuardLayer`] with
/// `failure_if(TransientHttp)`, an answer counts by its status (as above), an error by
/// [`is_transient`](crate::http::is_transient).
#[cfg(feature = "reqwest")]
impl Classify<reqwest::Response, reqwest::Error> for TransientHttp {
    fn is_failure(&self, result: &Result<reqwest::Response, reqwest::Error>) -> bool {
        match result {
            Ok(response) => crate::status::is_transient(response.status().as_u16()),
            Err(err) => crate::http::is_transient(err),
        }
    }
}

#[cfg(test)]
mod transient_http_tests {
    use super::{Classify, TransientHttp};

    fn answer(status: u16) -> Result<http::Response<()>, std::io::Error> {
        let response = http::Response::builder().status(status).body(());
        response.map_err(std::io::Error::other)
    }

    #[test]
    fn transient_http_counts_5xx_408_429_and_errors_only() {
        for status in [500, 502, 503, 504, 408, 429] {
            assert!(TransientHttp.is_failure(&answer(status)), "{status}");
        }
        for status in [200, 201, 204, 301, 400, 401, 403, 404, 409, 422] {
            assert!(!TransientHttp.is_failure(&answer(status)), "{status}");
        }
        let refused: Result<http::Response<()>, _> =
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(TransientHttp.is_failure(&refused));
    }
}
