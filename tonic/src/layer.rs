//! [`GrpcGuardLayer`]: a tonic client's calls guarded, with gRPC's own rules for what
//! counts, how a refusal is said, and whose deadline ends a call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tonic::Status;
use tower_http::classify::ClassifyResponse;
use tower_layer::Layer;
use tower_service::Service;

use outbound_guard::Guard;

use crate::body::GrpcBody;
use crate::classify::TransientGrpc;
use crate::exchange::{deadline_passed, guarded, Call, Exchange, Guarded};
use crate::status::{caller_deadline, refusal, status_of, BoxError};
use crate::timeout::{self, GRPC_TIMEOUT};

/// Wraps a gRPC client's service (a `tonic::transport::Channel`) in a system's guard;
/// see the [crate docs](crate) for what it does with each call.
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
            whole: None,
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
    // `total_timeout` as a `grpc-timeout` value, for the calls without a deadline of
    // their own (most): made again only when a reload changes it.
    whole: Option<(Duration, http::HeaderValue)>,
}

impl<S, C> GrpcGuardService<S, C> {
    /// The `grpc-timeout` value of the whole `total_timeout`.
    fn whole_budget(&mut self) -> http::HeaderValue {
        let total = self.guard.total_timeout();
        match &self.whole {
            Some((made_for, value)) if *made_for == total => value.clone(),
            _ => self.whole.insert((total, timeout::header(total))).1.clone(),
        }
    }
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
            .and_then(|value| timeout::parse(value.as_bytes()))
            .and_then(|budget| Instant::now().checked_add(budget));
        let whole = deadline.is_none().then(|| self.whole_budget());
        let exchange = Arc::new(Exchange::default());
        let call = guarded(Guarded {
            guard: self.guard.clone(),
            inner,
            request,
            classify: self.classify.clone(),
            until_headers: self.until_headers,
            deadline,
            whole,
            exchange: Arc::clone(&exchange),
        });
        GrpcResponseFuture {
            call: Some(call),
            exchange,
            deadline: deadline.map(|at| Box::pin(tokio::time::sleep_until(at))),
        }
    }
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
