//! [`GrpcGuardLayer`]: a tonic client's calls guarded, with gRPC's own rules for what
//! counts, how a refusal is said, and whose deadline ends a call.

use std::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::time::{Instant, Sleep};
use tonic::Status;
use tower_http::classify::{ClassifiedResponse, ClassifyEos, ClassifyResponse};
use tower_layer::Layer;
use tower_service::Service;

use super::grpc_body::GrpcBody;
use super::grpc_timeout::{self, GRPC_TIMEOUT};
use super::transient::TransientGrpc;
use crate::error::{Cause, CircuitBreakerError};
use crate::guard::Guard;

/// The error type gRPC clients box their errors into.
pub(super) type BoxError = Box<dyn Error + Send + Sync>;

/// Wraps a gRPC client's service (a `tonic::transport::Channel`) in a system's guard
/// (feature `tonic`); see the [module](super) for what it does with each call.
#[derive(Debug, Clone)]
pub struct GrpcGuardLayer<C = TransientGrpc> {
    guard: Guard,
    classify: C,
    until_headers: bool,
}

impl GrpcGuardLayer {
    /// Every call through `guard`, classified by [`TransientGrpc`], guarded until its
    /// status is known.
    pub fn new(guard: Guard) -> Self {
        GrpcGuardLayer {
            guard,
            classify: TransientGrpc,
            until_headers: false,
        }
    }
}

impl<C> GrpcGuardLayer<C> {
    /// Counts a call as a failure when `classify`, any tower-http
    /// [`ClassifyResponse`], says so: tower-http's `GrpcErrorsAsFailures` (every status
    /// but `Ok`), or a type of the service's own. A transport error always counts.
    pub fn failure_if<D: ClassifyResponse>(self, classify: D) -> GrpcGuardLayer<D> {
        GrpcGuardLayer {
            guard: self.guard,
            classify,
            until_headers: self.until_headers,
        }
    }

    /// Ends the guard's part of each call when the response headers come, for clients
    /// whose streams outlive `total_timeout` (a subscription): an error answered at
    /// once (a trailers-only response) counts, a stream that opened counts as a success,
    /// and its messages and final status run outside the bulkhead, the timeout and the
    /// breaker.
    #[must_use]
    pub fn until_headers(mut self) -> Self {
        self.until_headers = true;
        self
    }
}

impl<S, C: Clone> Layer<S> for GrpcGuardLayer<C> {
    type Service = GrpcGuardService<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcGuardService {
            inner,
            guard: self.guard.clone(),
            classify: self.classify.clone(),
            until_headers: self.until_headers,
        }
    }
}

/// A gRPC client service whose calls go through a guard; built by [`GrpcGuardLayer`].
#[derive(Debug, Clone)]
pub struct GrpcGuardService<S, C = TransientGrpc> {
    inner: S,
    guard: Guard,
    classify: C,
    until_headers: bool,
}

impl<S, C, ReqBody, ResBody> Service<http::Request<ReqBody>> for GrpcGuardService<S, C>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    ReqBody: Send + 'static,
    ResBody: http_body::Body + Send + 'static,
    ResBody::Error: Into<BoxError>,
    C: ClassifyResponse + Clone + Send + 'static,
    C::ClassifyEos: Send + 'static,
{
    type Response = http::Response<GrpcBody<ResBody>>;
    type Error = Status;
    type Future = GrpcResponseFuture<ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Status>> {
        self.inner
            .poll_ready(cx)
            .map_err(|error| status_of(error.into()))
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        // The service made ready takes the call; a clone is left for the next one.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let deadline = request
            .headers()
            .get(GRPC_TIMEOUT)
            .and_then(|value| grpc_timeout::parse(value.as_bytes()))
            .and_then(|budget| Instant::now().checked_add(budget));
        let exchange = Arc::new(Exchange::default());
        let call = guarded(Guarded {
            guard: self.guard.clone(),
            inner,
            request,
            classify: self.classify.clone(),
            until_headers: self.until_headers,
            deadline,
            exchange: Arc::clone(&exchange),
        });
        GrpcResponseFuture {
            call: Some(call),
            exchange,
            deadline: deadline.map(|at| Box::pin(tokio::time::sleep_until(at))),
        }
    }
}

/// The guarded call, boxed so that it owns its guard: it lives on in the response body
/// until the call's status is known.
pub(super) type Call =
    Pin<Box<dyn Future<Output = Result<Result<(), ()>, CircuitBreakerError>> + Send>>;

/// How a call's end is judged from its trailers (`true`: a failure).
type EndRule = Box<dyn FnOnce(Option<&http::HeaderMap>) -> bool + Send>;

/// What the guarded call hands to the caller's future and the response body.
pub(super) struct Exchange<B> {
    state: Mutex<ExchangeState<B>>,
}

struct ExchangeState<B> {
    /// The service's answer, for the caller's future to take.
    answer: Option<Result<http::Response<B>, BoxError>>,
    /// How the body's end is judged, when the headers did not settle it.
    end_rule: Option<EndRule>,
    /// The body's end judged: whether the call failed.
    verdict: Option<bool>,
}

impl<B> Default for Exchange<B> {
    fn default() -> Self {
        Exchange {
            state: Mutex::new(ExchangeState {
                answer: None,
                end_rule: None,
                verdict: None,
            }),
        }
    }
}

impl<B> Exchange<B> {
    fn state(&self) -> std::sync::MutexGuard<'_, ExchangeState<B>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, answer: Result<http::Response<B>, BoxError>, end_rule: Option<EndRule>) {
        let mut state = self.state();
        state.answer = Some(answer);
        state.end_rule = end_rule;
    }

    fn take_answer(&self) -> Option<Result<http::Response<B>, BoxError>> {
        self.state().answer.take()
    }

    /// The body ended (with these trailers, if any) or broke (`None` rule input and
    /// `broke`): the call's verdict, for the guarded call to record.
    pub(super) fn end(&self, trailers: Option<&http::HeaderMap>, broke: bool) {
        let mut state = self.state();
        let rule = state.end_rule.take();
        state.verdict = Some(broke || rule.is_some_and(|rule| rule(trailers)));
    }

    fn verdict(&self) -> Poll<Result<(), ()>> {
        match self.state().verdict {
            Some(true) => Poll::Ready(Err(())),
            Some(false) => Poll::Ready(Ok(())),
            None => Poll::Pending,
        }
    }
}

/// Everything one guarded call needs.
struct Guarded<S, Req, C, B> {
    guard: Guard,
    inner: S,
    request: http::Request<Req>,
    classify: C,
    until_headers: bool,
    deadline: Option<Instant>,
    exchange: Arc<Exchange<B>>,
}

/// The call through the guard: the request sent with the budget left as its
/// `grpc-timeout`, its answer classified from the headers, or judged when the body
/// ends. `Ok`: a success, `Err`: a failure; the answer itself goes through the exchange.
fn guarded<S, Req, C, B>(call: Guarded<S, Req, C, B>) -> Call
where
    S: Service<http::Request<Req>, Response = http::Response<B>> + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    Req: Send + 'static,
    B: Send + 'static,
    C: ClassifyResponse + Send + 'static,
    C::ClassifyEos: Send + 'static,
{
    let Guarded {
        guard,
        mut inner,
        mut request,
        classify,
        until_headers,
        deadline,
        exchange,
    } = call;
    Box::pin(async move {
        let total = guard.total_timeout();
        let call = async move {
            let budget = deadline.map_or(total, |at| {
                at.saturating_duration_since(Instant::now()).min(total)
            });
            let value = http::HeaderValue::from_str(&grpc_timeout::format(budget))
                .expect("digits and a unit letter");
            request.headers_mut().insert(GRPC_TIMEOUT, value);
            let answer: Result<_, BoxError> = inner.call(request).await.map_err(Into::into);
            let response = match answer {
                Ok(response) => response,
                Err(_) if deadline.is_some_and(|at| Instant::now() >= at) => {
                    // The caller's own deadline cut the call (tonic's timeout from the
                    // header we sent): the caller's future ends it, uncounted.
                    return std::future::pending().await;
                }
                Err(error) => {
                    exchange.answer(Err(error), None);
                    return Err(());
                }
            };
            let eos = match classify.classify_response(&response) {
                ClassifiedResponse::Ready(class) => {
                    exchange.answer(Ok(response), None);
                    return class.map_err(drop);
                }
                ClassifiedResponse::RequiresEos(_) if until_headers => {
                    exchange.answer(Ok(response), None);
                    return Ok(());
                }
                ClassifiedResponse::RequiresEos(eos) => eos,
            };
            let rule: EndRule = Box::new(move |trailers| eos.classify_eos(trailers).is_err());
            exchange.answer(Ok(response), Some(rule));
            std::future::poll_fn(|_| exchange.verdict()).await
        };
        guard.call(call).await
    })
}

pin_project_lite::pin_project! {
    /// The future of a [`GrpcGuardService`] call: the response once its headers come
    /// (its body still guarded until the status is known), or the guard's refusal as a
    /// [`Status`].
    pub struct GrpcResponseFuture<B> {
        call: Option<Call>,
        exchange: Arc<Exchange<B>>,
        deadline: Option<Pin<Box<Sleep>>>,
    }
}

impl<B> std::fmt::Debug for GrpcResponseFuture<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcResponseFuture")
            .field(
                "deadline",
                &self.deadline.as_ref().map(|sleep| sleep.deadline()),
            )
            .finish_non_exhaustive()
    }
}

impl<B> Future for GrpcResponseFuture<B> {
    type Output = Result<http::Response<GrpcBody<B>>, Status>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if deadline_passed(this.deadline.as_mut(), cx) {
            // Dropped unjudged: the caller gave up, the system did not fail.
            *this.call = None;
            return Poll::Ready(Err(caller_deadline()));
        }
        let call = this.call.as_mut().expect("polled after it completed");
        match call.as_mut().poll(cx) {
            Poll::Ready(Err(refused)) => {
                *this.call = None;
                Poll::Ready(Err(refusal(refused)))
            }
            Poll::Ready(Ok(_)) => {
                *this.call = None;
                let answer = this.exchange.take_answer();
                Poll::Ready(match answer.expect("a judged call has answered") {
                    Ok(response) => Ok(response.map(GrpcBody::plain)),
                    Err(error) => Err(status_of(error)),
                })
            }
            // Still guarded: the answer came, its status is at the end of the body.
            Poll::Pending => match this.exchange.take_answer() {
                Some(Ok(response)) => {
                    let call = this.call.take().expect("checked above");
                    let exchange = Arc::clone(this.exchange);
                    let deadline = this.deadline.take();
                    Poll::Ready(Ok(
                        response.map(|body| GrpcBody::guarded(body, call, exchange, deadline))
                    ))
                }
                Some(Err(_)) => unreachable!("an error answer ends the call at once"),
                None => Poll::Pending,
            },
        }
    }
}

/// Whether the caller's own deadline has passed; registers for its wake-up otherwise.
pub(super) fn deadline_passed(
    deadline: Option<&mut Pin<Box<Sleep>>>,
    cx: &mut Context<'_>,
) -> bool {
    deadline.is_some_and(|sleep| {
        Instant::now() >= sleep.deadline() || sleep.as_mut().poll(cx).is_ready()
    })
}

/// The caller's `grpc-timeout` passed: its deadline, not the system's failure.
pub(super) fn caller_deadline() -> Status {
    Status::deadline_exceeded("the deadline of the request's grpc-timeout passed")
}

/// The guard's refusal or timeout as the status a gRPC client acts on: `Unavailable`
/// (with the time left open as `grpc-retry-pushback-ms`) for a call never started,
/// `DeadlineExceeded` for a call cut at `total_timeout`; the
/// [`CircuitBreakerError`] is the status's `source`.
pub(super) fn refusal(error: CircuitBreakerError) -> Status {
    let message = error.to_string();
    let mut status = match error.cause() {
        Cause::Timeout { .. } | Cause::Slow { .. } => Status::deadline_exceeded(message),
        _ => Status::unavailable(message),
    };
    if let Some(after) = error.retry_after() {
        let millis = after.as_millis().to_string();
        let value = millis.parse().expect("digits are ASCII metadata");
        status
            .metadata_mut()
            .insert("grpc-retry-pushback-ms", value);
    }
    status.set_source(Arc::new(error));
    status
}

/// A service's or a body's error as a [`Status`], as tonic would make it, except
/// tonic's own timeout (from the `grpc-timeout` we sent), which is a deadline, not a
/// cancellation.
pub(super) fn status_of(error: BoxError) -> Status {
    let mut link: Option<&(dyn Error + 'static)> = Some(&*error);
    while let Some(cause) = link {
        if cause.is::<tonic::TimeoutExpired>() {
            let mut status = Status::deadline_exceeded(error.to_string());
            status.set_source(Arc::from(error));
            return status;
        }
        link = cause.source();
    }
    Status::from_error(error)
}
