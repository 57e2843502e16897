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

use outbound_guard::{Admission, CallTimer, Guard, RunningCall};

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
        GrpcResponseFuture {
            deadline: CallerDeadline::new(deadline),
            call: None,
            timer: CallTimer::new(),
            stage: Stage::Admitting {
                admission: self.guard.admit(),
                inner,
                request,
                whole,
            },
            classify: Some(self.classify.clone()),
            until_headers: self.until_headers,
        }
    }
}

/// Where a call stands with its guard.
enum Stage<S, Req> {
    /// Waiting for the bulkhead and the breaker; the request is sent once admitted.
    Admitting {
        admission: Admission,
        inner: S,
        request: Req,
        /// Without a caller's deadline, the header for the whole `total_timeout`.
        whole: Option<http::HeaderValue>,
    },
    /// Sent, with the budget left due at `sent_due`, waiting for the headers.
    Calling {
        running: RunningCall,
        sent_due: Instant,
    },
    /// The channel gave up at the deadline we sent it: ours to end, on this same tick,
    /// by the caller's deadline (uncounted) or the guard's timer (counted, the guard's
    /// error).
    Expiring { running: RunningCall },
    /// Answered, refused, or ended.
    Done,
}

pin_project_lite::pin_project! {
    /// The future of a [`GrpcGuardService`] call: the response once its headers come
    /// (its body still guarded until the status is known), or the guard's refusal as a
    /// [`Status`]. It holds the call's steps itself (admission, the running call and
    /// its timer), with no box and no lock: a body still to be judged takes the
    /// running call over.
    #[must_use = "futures do nothing unless awaited"]
    pub struct GrpcResponseFuture<S, Req, C>
    where
        S: Service<Req>,
    {
        #[pin]
        deadline: CallerDeadline,
        // Field order is drop order: the channel's call, its timer, and only then the
        // permits (in `stage`).
        #[pin]
        call: Option<S::Future>,
        #[pin]
        timer: CallTimer,
        stage: Stage<S, Req>,
        classify: Option<C>,
        until_headers: bool,
    }
}

impl<S, Req, C> std::fmt::Debug for GrpcResponseFuture<S, Req, C>
where
    S: Service<Req>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stage = match &self.stage {
            Stage::Admitting { .. } => "admitting",
            Stage::Calling { .. } => "calling",
            Stage::Expiring { .. } => "expiring",
            Stage::Done => "done",
        };
        f.debug_struct("GrpcResponseFuture")
            .field("deadline", &self.deadline.at())
            .field("stage", &stage)
            .finish_non_exhaustive()
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
        if this.deadline.as_mut().passed(cx) {
            // Dropped unjudged: the caller gave up, the system did not fail. The
            // channel's call goes first, then the permits.
            this.call.set(None);
            *this.stage = Stage::Done;
            return Poll::Ready(Err(caller_deadline()));
        }
        loop {
            match this.stage {
                Stage::Admitting { admission, .. } => {
                    let mut running = match ready!(Pin::new(admission).poll(cx)) {
                        Ok(running) => running,
                        Err(refused) => {
                            *this.stage = Stage::Done;
                            return Poll::Ready(Err(refusal(refused)));
                        }
                    };
                    let Stage::Admitting {
                        mut inner,
                        mut request,
                        whole,
                        ..
                    } = std::mem::replace(this.stage, Stage::Done)
                    else {
                        unreachable!("matched above")
                    };
                    // The budget left after the wait for a permit, sent on so that the
                    // server stops in time.
                    let total = running.guard().total_timeout();
                    let budget = this.deadline.at().map_or(total, |at| {
                        at.saturating_duration_since(Instant::now()).min(total)
                    });
                    let value = whole.unwrap_or_else(|| timeout::header(budget));
                    request.headers_mut().insert(GRPC_TIMEOUT, value);
                    let sent_due = Instant::now() + budget;
                    let future = running.poll_call(|| inner.call(request));
                    this.call.set(Some(future));
                    *this.stage = Stage::Calling { running, sent_due };
                }
                Stage::Calling { running, sent_due } => {
                    let Some(call) = this.call.as_mut().as_pin_mut() else {
                        unreachable!("a call being made has its future")
                    };
                    // A panic of the channel is recorded as a failure; the running call
                    // stays in `stage`, to give its permits back after the call's future.
                    let Poll::Ready(answer) = running.poll_call(|| call.poll(cx)) else {
                        let timed_out = ready!(running.poll_expired(this.timer.as_mut(), cx));
                        this.call.set(None);
                        *this.stage = Stage::Done;
                        return Poll::Ready(Err(refusal(timed_out)));
                    };
                    let sent_due = *sent_due;
                    this.call.set(None);
                    let Stage::Calling { mut running, .. } =
                        std::mem::replace(this.stage, Stage::Done)
                    else {
                        unreachable!("matched above")
                    };
                    let response = match answer.map_err(Into::into) {
                        Ok(response) => response,
                        Err(error) if timed_out_by_us(&*error, this.deadline.at(), sent_due) => {
                            *this.stage = Stage::Expiring { running };
                            continue;
                        }
                        Err(error) => {
                            running.finish(true);
                            return Poll::Ready(Err(status_of(error)));
                        }
                    };
                    let classify = this.classify.take().expect("a call is classified once");
                    // Inside the guard: a classifier that panics is recorded as a
                    // failure, as the attribute records one.
                    let classified = running.poll_call(|| classify.classify_response(&response));
                    let eos = match classified {
                        ClassifiedResponse::Ready(class) => {
                            let hint = crate::pushback::hint_of(&response);
                            running.finish_with_retry_after(class.is_err(), hint);
                            return Poll::Ready(Ok(response.map(GrpcBody::plain)));
                        }
                        ClassifiedResponse::RequiresEos(_) if *this.until_headers => {
                            running.finish(false);
                            return Poll::Ready(Ok(response.map(GrpcBody::plain)));
                        }
                        ClassifiedResponse::RequiresEos(eos) => eos,
                    };
                    // Still guarded: its status is at the end of the body.
                    let deadline = this.deadline.at();
                    return Poll::Ready(Ok(
                        response.map(|body| GrpcBody::guarded(body, running, eos, deadline))
                    ));
                }
                Stage::Expiring { running } => {
                    let timed_out = ready!(running.poll_expired(this.timer.as_mut(), cx));
                    *this.stage = Stage::Done;
                    return Poll::Ready(Err(refusal(timed_out)));
                }
                Stage::Done => panic!("`GrpcResponseFuture` polled after it completed"),
            }
        }
    }
}
