//! [`GuardLayer`]: any `tower::Service` guarded, its whole `Result` classified when
//! the service's future ends.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tower_layer::Layer;
use tower_service::Service;

use outbound_guard::{CircuitBreakerError, Guard, GuardedCall, Verdict};
use outbound_guard::{Judge, RunningCall};

use crate::grpc_notice::GrpcNotice;

/// Wraps a service in a system's guard; see the [crate docs](crate).
#[derive(Debug, Clone)]
pub struct GuardLayer<C = EveryError> {
    guard: Guard,
    failure_if: C,
    slow_as_error: bool,
    grpc_notice: Arc<GrpcNotice>,
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

    /// Whether `result` is a gRPC answer (`content-type: application/grpc…`) that this
    /// classifier cannot judge. gRPC's errors arrive as HTTP 200 with a `grpc-status`
    /// header or trailer, so an HTTP classifier counts none of them; when this says `true`
    /// the layer logs a `tracing` warning, once, naming the system and
    /// `outbound_guard_tonic::GrpcGuardLayer`. [`TransientHttp`](crate::TransientHttp)
    /// reads the response's `content-type`; the default, for classifiers that cannot see
    /// a response's headers, is `false`.
    fn misses_grpc(&self, result: &Result<R, E>) -> bool {
        let _ = result;
        false
    }

    /// The upstream's retry hint in a result that counts as a failure (`Retry-After` of
    /// a 429 or 503): if that failure opens the breaker, or finds it open, the open
    /// period lasts at least this long, capped by `cb_open_max`. None by default;
    /// [`TransientHttp`](crate::TransientHttp) reads `Retry-After`.
    fn retry_after(&self, result: &Result<R, E>) -> Option<Duration> {
        let _ = result;
        None
    }
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
            grpc_notice: Arc::new(GrpcNotice::new(guard.system())),
            guard,
            failure_if: EveryError,
            slow_as_error: false,
        }
    }
}

impl<C> GuardLayer<C> {
    /// Counts a result as a failure when `classify` says so (run when the call ends,
    /// inside the guard: a panic in it is recorded as a failure and goes on unwinding).
    ///
    /// `classify` is a named [`Classify`] type — [`TransientHttp`](crate::TransientHttp)
    /// for HTTP clients, or one of the service's own — or a closure over the whole
    /// `Result`. A closure needs its argument's type written out
    /// (`|result: &Result<Response<Incoming>, Error>| …`): a layer is built before the
    /// service it wraps, so nothing tells the compiler the closure's argument, and without
    /// it rustc stops at E0282. A named type needs no annotation:
    ///
    /// ```
    /// # use outbound_guard::{Guard, Settings};
    /// use outbound_guard_tower::{Classify, GuardLayer};
    /// # let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    /// # let guard = Guard::new(settings.system("sber").unwrap());
    ///
    /// /// A ledger answers `Ok(None)` when it is rebuilding its index: an outage.
    /// #[derive(Clone)]
    /// struct Rebuilding;
    ///
    /// impl<E> Classify<Option<u64>, E> for Rebuilding {
    ///     fn is_failure(&self, result: &Result<Option<u64>, E>) -> bool {
    ///         !matches!(result, Ok(Some(_)))
    ///     }
    /// }
    ///
    /// let layer = GuardLayer::new(guard).failure_if(Rebuilding);
    /// ```
    pub fn failure_if<D>(self, classify: D) -> GuardLayer<D> {
        GuardLayer {
            guard: self.guard,
            failure_if: classify,
            slow_as_error: self.slow_as_error,
            grpc_notice: self.grpc_notice,
        }
    }

    /// Returns a slow successful call as [`Cause::Slow`](outbound_guard::Cause::Slow) instead of
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
            grpc_notice: Arc::clone(&self.grpc_notice),
        }
    }
}

/// A service whose calls go through a guard; built by [`GuardLayer`].
///
/// # Readiness
///
/// `poll_ready` is the inner service's own: the guard decides inside the future `call`
/// returns, where it waits at most `bulkhead_wait` for a bulkhead permit and then asks
/// the breaker. So a refusal is an answer, [`GuardedError::Guard`] for that one call,
/// and never backpressure. This differs from tower's `ConcurrencyLimit`, which waits for
/// its permit in `poll_ready`, on purpose: an open breaker must answer at once (fail
/// fast), which a `poll_ready` left pending cannot; a `poll_ready` that failed instead
/// would make a `Buffer` in front of the service fail for good; and the guide's bulkhead
/// waits a bounded time, then refuses. A stack that wants backpressure as well puts
/// `ConcurrencyLimit` in front of this layer.
#[derive(Debug, Clone)]
pub struct GuardService<S, C = EveryError> {
    inner: S,
    guard: Guard,
    failure_if: C,
    slow_as_error: bool,
    /// Shared by every service of one layer (and their calls), so the layer warns once.
    grpc_notice: Arc<GrpcNotice>,
}

/// The error of a guarded service: the guard's, or the service's own.
///
/// Transparent, like `#[error(transparent)]`: it displays the error it holds and hands
/// on that error's `source`, so an error chain (`anyhow`'s `{:#}`, a log's cause list)
/// prints each message once. Match on it to tell the guard's refusal from the
/// service's error.
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
            GuardedError::Guard(e) => e.source(),
            GuardedError::Service(e) => e.source(),
        }
    }
}

impl<S, C, Req> Service<Req> for GuardService<S, C>
where
    S: Service<Req> + Clone,
    C: Classify<S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = GuardedError<S::Error>;
    type Future = GuardFuture<S, Req, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(GuardedError::Service)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // The service made ready is the one that must take the call: keep it, leave a
        // clone for the next `poll_ready`. The request is only handed over once the
        // guard has admitted the call.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let judge = Classified {
            classify: self.failure_if.clone(),
            slow_as_error: self.slow_as_error,
            grpc_notice: Arc::clone(&self.grpc_notice),
        };
        GuardFuture {
            // The public extension point, as any client's layer would use it.
            call: self.guard.call_judged(
                judge,
                CallOnAdmit {
                    future: None,
                    start: Some((inner, request)),
                },
            ),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`GuardService`] call: one
    /// [`GuardedCall`](outbound_guard::GuardedCall), unboxed.
    #[must_use = "futures do nothing unless awaited"]
    pub struct GuardFuture<S, Req, C>
    where
        S: Service<Req>,
    {
        #[pin]
        call: GuardedCall<CallOnAdmit<S, Req>, Classified<C>>,
    }
}

impl<S, Req, C> fmt::Debug for GuardFuture<S, Req, C>
where
    S: Service<Req>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardFuture")
            .field("call", &self.call)
            .finish()
    }
}

impl<S, Req, C> Future for GuardFuture<S, Req, C>
where
    S: Service<Req>,
    C: Classify<S::Response, S::Error>,
{
    type Output = Result<S::Response, GuardedError<S::Error>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(match ready!(self.project().call.poll(cx)) {
            Ok(result) => result.map_err(GuardedError::Service),
            Err(error) => Err(GuardedError::Guard(error)),
        })
    }
}

pin_project_lite::pin_project! {
    /// The service's call, made when the guard first polls it (so a refused call never
    /// reaches the service).
    struct CallOnAdmit<S, Req>
    where
        S: Service<Req>,
    {
        #[pin]
        future: Option<S::Future>,
        start: Option<(S, Req)>,
    }
}

impl<S, Req> Future for CallOnAdmit<S, Req>
where
    S: Service<Req>,
{
    type Output = Result<S::Response, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Some((mut service, request)) = this.start.take() {
            this.future.set(Some(service.call(request)));
        }
        let Some(future) = this.future.as_pin_mut() else {
            unreachable!("the service was called just above")
        };
        future.poll(cx)
    }
}

/// The layer's judge: the service's whole `Result` read by its [`Classify`] inside the
/// guard, when the call ends.
struct Classified<C> {
    classify: C,
    slow_as_error: bool,
    // A reference count, not an allocation: the layer's one notice.
    grpc_notice: Arc<GrpcNotice>,
}

impl<R, E, C: Classify<R, E>> Judge<Result<R, E>> for Classified<C> {
    type Output = Result<R, E>;

    fn judge(
        &mut self,
        result: Result<R, E>,
        mut call: RunningCall,
    ) -> Result<Result<R, E>, CircuitBreakerError> {
        // Inside the guard: a classifier that panics counts as a failure.
        let verdict = call.poll_call(|| {
            if !self.grpc_notice.given() && self.classify.misses_grpc(&result) {
                self.grpc_notice.warn();
            }
            let failed = self.classify.is_failure(&result);
            let hint = if failed {
                self.classify.retry_after(&result)
            } else {
                None
            };
            Verdict::new(failed).retry_after(hint)
        });
        match call.finish(verdict) {
            Err(slow) if self.slow_as_error => Err(slow),
            _ => Ok(result),
        }
    }
}

#[cfg(test)]
mod tests {
    use outbound_guard::{Cause, CircuitBreakerError};

    use super::GuardedError;

    #[derive(Debug, thiserror::Error)]
    #[error("request to fiscal failed")]
    struct Outer(#[source] std::io::Error);

    /// Every message of an error chain, as a log or `anyhow`'s `{:#}` prints it.
    fn chain(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
        std::iter::successors(Some(error), |e| e.source())
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn every_error_counts_every_err_and_a_closure_what_it_says() {
        use super::{Classify, EveryError};
        let ok: Result<u16, std::io::Error> = Ok(503);
        let err: Result<u16, std::io::Error> = Err(std::io::ErrorKind::ConnectionReset.into());
        assert!(!EveryError.is_failure(&ok));
        assert!(EveryError.is_failure(&err));
        let server_errors = |result: &Result<u16, std::io::Error>| matches!(result, Ok(500..));
        assert!(server_errors.is_failure(&ok));
        assert!(!server_errors.is_failure(&err));
    }

    #[test]
    fn a_service_that_cannot_take_calls_says_so_through_the_layer() {
        use std::task::{Context, Poll, Waker};
        use tower_layer::Layer;
        use tower_service::Service;

        #[derive(Clone)]
        struct Closed;
        impl Service<()> for Closed {
            type Response = ();
            type Error = std::io::Error;
            type Future = std::future::Ready<Result<(), std::io::Error>>;
            fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), std::io::Error>> {
                Poll::Ready(Err(std::io::Error::other("pool closed")))
            }
            fn call(&mut self, (): ()) -> Self::Future {
                unreachable!("never ready")
            }
        }

        let settings = outbound_guard::Settings::parse("[systems.sber]", "inline").unwrap();
        let guard = outbound_guard::Guard::new(settings.system("sber").unwrap());
        let mut service = super::GuardLayer::new(guard).layer(Closed);
        let polled = service.poll_ready(&mut Context::from_waker(Waker::noop()));
        assert!(
            matches!(polled, Poll::Ready(Err(GuardedError::Service(e))) if e.to_string() == "pool closed")
        );
    }

    #[test]
    fn an_error_chain_prints_each_message_once() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let service: GuardedError<Outer> = GuardedError::Service(Outer(refused));
        assert_eq!(
            chain(&service),
            ["request to fiscal failed", "connection refused"]
        );
        let guard: GuardedError<Outer> =
            GuardedError::Guard(CircuitBreakerError::from_cause("fiscal", Cause::ForcedOpen));
        assert_eq!(
            chain(&guard),
            ["fiscal: circuit forced open by an operator"]
        );
    }
}
