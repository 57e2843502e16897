//! [`GrpcGuardLayer`]: a tonic client's calls guarded, with gRPC's own rules for what
//! counts, how a refusal is said, and whose deadline ends a call.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::Instant;
use tonic::Status;
use tower_http::classify::{ClassifiedResponse, ClassifyResponse};
use tower_layer::Layer;
use tower_service::Service;

use outbound_guard::{CircuitBreakerError, Guard, GuardedCall, Verdict};
use outbound_guard::{Judge, RunningCall};

use crate::body::GrpcBody;
use crate::classify::TransientGrpc;
use crate::deadline::{timed_out_by_us, CallerDeadline};
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
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>> + Clone,
    S::Error: Into<BoxError>,
    ResBody: http_body::Body,
    ResBody::Error: Into<BoxError>,
    C: ClassifyResponse + Clone,
{
    type Response = http::Response<GrpcBody<ResBody, C::ClassifyEos>>;
    type Error = Status;
    type Future = GrpcResponseFuture<S, http::Request<ReqBody>, C>;

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
        let send = SendOnAdmit {
            future: None,
            start: Some((inner, request)),
            whole,
            total: self.guard.total_timeout(),
            deadline,
            sent_due: None,
        };
        let judge = GrpcJudge {
            classify: Some(self.classify.clone()),
            until_headers: self.until_headers,
            deadline,
        };
        GrpcResponseFuture {
            deadline: CallerDeadline::new(deadline),
            call: Some(self.guard.call_judged(judge, send)),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`GrpcGuardService`] call: the response once its headers come
    /// (its body still guarded until the status is known), or the guard's refusal as a
    /// [`Status`]. One [`GuardedCall`](outbound_guard::GuardedCall), unboxed, under the
    /// caller's deadline: a body still to be judged takes the running call over.
    #[must_use = "futures do nothing unless awaited"]
    pub struct GrpcResponseFuture<S, Req, C>
    where
        S: Service<Req>,
    {
        #[pin]
        deadline: CallerDeadline,
        // `None` once the caller's deadline dropped it (the channel's call first, then
        // the permits: uncounted, as a cancelled call) or once it completed.
        #[pin]
        call: Option<GuardedCall<SendOnAdmit<S, Req>, GrpcJudge<C>>>,
    }
}

impl<S, Req, C> std::fmt::Debug for GrpcResponseFuture<S, Req, C>
where
    S: Service<Req>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcResponseFuture")
            .field("deadline", &self.deadline.at())
            .field("call", &self.call)
            .finish()
    }
}

impl<S, C, ReqBody, ResBody> Future for GrpcResponseFuture<S, http::Request<ReqBody>, C>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Error: Into<BoxError>,
    C: ClassifyResponse,
{
    type Output = Result<http::Response<GrpcBody<ResBody, C::ClassifyEos>>, Status>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        assert!(
            this.call.is_some(),
            "`GrpcResponseFuture` polled after it completed"
        );
        if this.deadline.as_mut().passed(cx) {
            // Dropped unjudged: the caller gave up, the system did not fail.
            this.call.set(None);
            return Poll::Ready(Err(caller_deadline()));
        }
        let Some(call) = this.call.as_mut().as_pin_mut() else {
            unreachable!("checked above")
        };
        let answer = ready!(call.poll(cx));
        this.call.set(None);
        Poll::Ready(answer.unwrap_or_else(|refused| Err(refusal(refused))))
    }
}

pin_project_lite::pin_project! {
    /// The channel's call, sent when the guard first polls it (a refused call never
    /// reaches the channel) with the budget left as `grpc-timeout`, so that the server
    /// stops in time. When the channel gives up at a deadline the layer keeps itself, the
    /// call is the layer's to end (by the caller's deadline, uncounted, or the guard's
    /// timer, counted): it then stays pending, its channel's future dropped.
    struct SendOnAdmit<S, Req>
    where
        S: Service<Req>,
    {
        #[pin]
        future: Option<S::Future>,
        start: Option<(S, Req)>,
        // Without a caller's deadline, the header for the whole `total_timeout`.
        whole: Option<http::HeaderValue>,
        total: Duration,
        deadline: Option<Instant>,
        // When the budget sent on runs out.
        sent_due: Option<Instant>,
    }
}

impl<S, ReqBody, ResBody> Future for SendOnAdmit<S, http::Request<ReqBody>>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Error: Into<BoxError>,
{
    type Output = Result<http::Response<ResBody>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Some((mut inner, mut request)) = this.start.take() {
            // The budget left after the wait for a permit.
            let total = *this.total;
            let budget = this.deadline.map_or(total, |at| {
                at.saturating_duration_since(Instant::now()).min(total)
            });
            let value = this.whole.take().unwrap_or_else(|| timeout::header(budget));
            request.headers_mut().insert(GRPC_TIMEOUT, value);
            *this.sent_due = Some(Instant::now() + budget);
            this.future.set(Some(inner.call(request)));
        }
        let Some(future) = this.future.as_mut().as_pin_mut() else {
            // Given up at one of the layer's deadlines: its timer ends the call.
            return Poll::Pending;
        };
        let answer = ready!(future.poll(cx)).map_err(Into::into);
        this.future.set(None);
        match answer {
            Err(error)
                if timed_out_by_us(&*error, *this.deadline, this.sent_due.expect("sent")) =>
            {
                // Polled again at once: the deadline that is due ends the call there.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            answer => Poll::Ready(answer),
        }
    }
}

/// The layer's judge: a transport error counts; an answer is classified by its headers
/// (a trailers-only answer), or, when its status is at the end of the body, handed on
/// to the [`GrpcBody`] with the running call, to be judged at the trailers.
struct GrpcJudge<C> {
    classify: Option<C>,
    until_headers: bool,
    deadline: Option<Instant>,
}

impl<C, ResBody> Judge<Result<http::Response<ResBody>, BoxError>> for GrpcJudge<C>
where
    C: ClassifyResponse,
{
    type Output = Result<http::Response<GrpcBody<ResBody, C::ClassifyEos>>, Status>;

    fn judge(
        &mut self,
        answer: Result<http::Response<ResBody>, BoxError>,
        mut call: RunningCall,
    ) -> Result<Self::Output, CircuitBreakerError> {
        let response = match answer {
            Ok(response) => response,
            Err(error) => {
                let _ = call.finish(Verdict::FAILURE);
                return Ok(Err(status_of(error)));
            }
        };
        let classify = self.classify.take().expect("a call is judged once");
        // Inside the guard: a classifier that panics counts as a failure, as the
        // attribute counts one.
        let classified = call.poll_call(|| classify.classify_response(&response));
        let eos = match classified {
            ClassifiedResponse::Ready(class) => {
                let hint = crate::pushback::hint_of(&response);
                let _ = call.finish(Verdict::new(class.is_err()).retry_after(hint));
                return Ok(Ok(response.map(GrpcBody::plain)));
            }
            ClassifiedResponse::RequiresEos(_) if self.until_headers => {
                let _ = call.finish(Verdict::SUCCESS);
                return Ok(Ok(response.map(GrpcBody::plain)));
            }
            ClassifiedResponse::RequiresEos(eos) => eos,
        };
        // Still guarded: its status is at the end of the body.
        let deadline = self.deadline;
        Ok(Ok(
            response.map(|body| GrpcBody::guarded(body, call, eos, deadline))
        ))
    }
}
