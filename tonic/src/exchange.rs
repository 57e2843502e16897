//! The guarded gRPC call itself: sent with the budget left as its `grpc-timeout`,
//! classified from its headers, or kept waiting for the verdict of its body's end; and
//! [`Exchange`], through which it hands its answer to the caller's future and learns
//! that verdict from the body.

use std::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tower_http::classify::{ClassifiedResponse, ClassifyEos, ClassifyResponse};
use tower_service::Service;

use outbound_guard::{CircuitBreakerError, Guard};

use crate::status::{is_tonic_timeout, BoxError};
use crate::timeout::{self, GRPC_TIMEOUT};

/// The guarded call, boxed so that it owns its guard: it lives on in the response body
/// until the call's status is known.
pub(crate) type Call =
    Pin<Box<dyn Future<Output = Result<Result<(), ()>, CircuitBreakerError>> + Send>>;

/// How a guarded body ended.
pub(crate) enum Ending {
    /// At its end, with these trailers (a gRPC status among them) or none.
    Trailers(Option<http::HeaderMap>),
    /// With an error: the stream broke.
    Broke,
}

/// What the guarded call hands to the caller's future, and learns from the body.
pub(crate) struct Exchange<B> {
    state: Mutex<ExchangeState<B>>,
}

struct ExchangeState<B> {
    /// The service's answer, for the caller's future to take.
    answer: Option<Result<http::Response<B>, BoxError>>,
    /// How the body ended, for the guarded call to judge.
    ending: Option<Ending>,
}

impl<B> Default for Exchange<B> {
    fn default() -> Self {
        Exchange {
            state: Mutex::new(ExchangeState {
                answer: None,
                ending: None,
            }),
        }
    }
}

impl<B> Exchange<B> {
    fn state(&self) -> std::sync::MutexGuard<'_, ExchangeState<B>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, answer: Result<http::Response<B>, BoxError>) {
        self.state().answer = Some(answer);
    }

    pub(crate) fn take_answer(&self) -> Option<Result<http::Response<B>, BoxError>> {
        self.state().answer.take()
    }

    /// The body ended: the guarded call judges how when it is polled next.
    pub(crate) fn end(&self, ending: Ending) {
        self.state().ending = Some(ending);
    }

    fn ending(&self) -> Poll<Ending> {
        self.state()
            .ending
            .take()
            .map_or(Poll::Pending, Poll::Ready)
    }
}

/// Everything one guarded call needs.
pub(crate) struct Guarded<S, Req, C, B> {
    pub(crate) guard: Guard,
    pub(crate) inner: S,
    pub(crate) request: http::Request<Req>,
    pub(crate) classify: C,
    pub(crate) until_headers: bool,
    pub(crate) deadline: Option<Instant>,
    /// Without a caller's deadline, the header for the whole `total_timeout`, made once
    /// per service.
    pub(crate) whole: Option<http::HeaderValue>,
    pub(crate) exchange: Arc<Exchange<B>>,
}

/// The call through the guard: the request sent with the budget left as its
/// `grpc-timeout`, its answer classified from the headers, or judged when the body
/// ends. `Ok`: a success, `Err`: a failure; the answer itself goes through the exchange.
pub(crate) fn guarded<S, Req, C, B>(call: Guarded<S, Req, C, B>) -> Call
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
        whole,
        exchange,
    } = call;
    Box::pin(async move {
        let total = guard.total_timeout();
        let call = async move {
            let budget = deadline.map_or(total, |at| {
                at.saturating_duration_since(Instant::now()).min(total)
            });
            let value = whole.unwrap_or_else(|| timeout::header(budget));
            request.headers_mut().insert(GRPC_TIMEOUT, value);
            let sent_due = Instant::now() + budget;
            let answer: Result<_, BoxError> = inner.call(request).await.map_err(Into::into);
            let response = match answer {
                Ok(response) => response,
                Err(error) if timed_out_by_us(&*error, deadline, sent_due) => {
                    // Ours to end, on this same tick: the caller's deadline (uncounted)
                    // or the guard's timeout (counted, with the guard's error).
                    return std::future::pending().await;
                }
                Err(error) => {
                    exchange.answer(Err(error));
                    return Err(());
                }
            };
            let eos = match classify.classify_response(&response) {
                ClassifiedResponse::Ready(class) => {
                    exchange.answer(Ok(response));
                    return class.map_err(drop);
                }
                ClassifiedResponse::RequiresEos(_) if until_headers => {
                    exchange.answer(Ok(response));
                    return Ok(());
                }
                ClassifiedResponse::RequiresEos(eos) => eos,
            };
            exchange.answer(Ok(response));
            // Judged here, inside the guard: a classifier that panics is recorded as a
            // failure, as the attribute records one.
            match std::future::poll_fn(|_| exchange.ending()).await {
                Ending::Trailers(trailers) => eos.classify_eos(trailers.as_ref()).map_err(drop),
                Ending::Broke => Err(()),
            }
        };
        guard.call(call).await
    })
}

/// Whether a call's error is one of the two deadlines the layer keeps: the caller's
/// has passed, or the channel's own timeout, which tonic sets from the `grpc-timeout`
/// we sent (`sent_due`), fired with it. Either way a timer of ours is due and ends the
/// call itself: without this, the channel's timer winning the race on a busy machine
/// would turn the guard's timeout into a transport error. tokio's timers fire on
/// millisecond ticks, hence the millisecond of slack. A shorter timeout of the
/// channel's own (`Endpoint::timeout`) fires earlier and is the system's failure.
fn timed_out_by_us(
    error: &(dyn Error + 'static),
    deadline: Option<Instant>,
    sent_due: Instant,
) -> bool {
    let now = Instant::now();
    deadline.is_some_and(|at| now >= at)
        || (now + Duration::from_millis(1) >= sent_due && is_tonic_timeout(error))
}

/// Whether the caller's own deadline has passed; registers for its wake-up otherwise.
pub(crate) fn deadline_passed(
    deadline: Option<&mut Pin<Box<Sleep>>>,
    cx: &mut Context<'_>,
) -> bool {
    deadline.is_some_and(|sleep| {
        Instant::now() >= sleep.deadline() || sleep.as_mut().poll(cx).is_ready()
    })
}
