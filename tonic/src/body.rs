//! [`GrpcBody`]: a gRPC response body whose call is still guarded until its status
//! comes in the trailers.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use tonic::Status;
use tower_http::classify::{ClassifyEos, GrpcEosErrorsAsFailures};

// The judge hands the running call to the body unfinished; the body keeps the total
// timeout with `RunningCall::poll_expired`, hidden from the core's docs: the one use of
// a running call past its judge, which no other client needs.
use outbound_guard::RunningCall;
use outbound_guard::Verdict;

use crate::deadline::CallerDeadline;
use crate::status::{caller_deadline, refusal, status_of, BoxError};

pin_project_lite::pin_project! {
    /// The body of a response through a [`GrpcGuardService`](crate::GrpcGuardService).
    /// While the call's status is unknown it holds the running call (the bulkhead
    /// permit and the breaker's permission) with its timer, under `total_timeout` and
    /// the caller's `grpc-timeout`: the trailers (or the end of the body) judge the call
    /// through the end-of-stream classifier `E`; an error of the body counts as a
    /// failure; a deadline passing ends the body with `DeadlineExceeded`; a body
    /// dropped before its end leaves the call uncounted, as a cancelled call.
    pub struct GrpcBody<B, E = GrpcEosErrorsAsFailures> {
        // Field order is drop order: the stream, then its timers, then the permits.
        #[pin]
        inner: B,
        #[pin]
        deadline: CallerDeadline,
        // The running call's alarms (slow threshold, total timeout).
        #[pin]
        timer: Option<Sleep>,
        watch: Option<Watch<E>>,
        // The guard ended the body with an error: nothing more comes.
        cut: bool,
    }
}

/// What a body still guarded holds: the running call, and how its end is judged.
struct Watch<E> {
    running: RunningCall,
    eos: E,
}

impl<B, E> std::fmt::Debug for GrpcBody<B, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcBody")
            .field("guarded", &self.watch.is_some())
            .finish_non_exhaustive()
    }
}

impl<B, E> GrpcBody<B, E> {
    /// A body whose call was already judged.
    pub(crate) fn plain(inner: B) -> Self {
        GrpcBody {
            inner,
            deadline: CallerDeadline::new(None),
            timer: None,
            watch: None,
            cut: false,
        }
    }

    /// A body whose call, `running`, is judged at its end by `eos`, unless the
    /// caller's `deadline` or the guard's timeout comes first.
    pub(crate) fn guarded(
        inner: B,
        running: RunningCall,
        eos: E,
        deadline: Option<Instant>,
    ) -> Self {
        GrpcBody {
            inner,
            deadline: CallerDeadline::new(deadline),
            timer: None,
            watch: Some(Watch { running, eos }),
            cut: false,
        }
    }
}

/// The body ended with `trailers` (or none): the call is judged by them now, inside
/// the guard (a classifier that panics is recorded as a failure).
fn end<E: ClassifyEos>(watch: Option<Watch<E>>, trailers: Option<&http::HeaderMap>) {
    if let Some(Watch { mut running, eos }) = watch {
        let failed = running.poll_call(|| eos.classify_eos(trailers).is_err());
        let hint = trailers.and_then(crate::pushback::retry_pushback);
        let _ = running.finish(Verdict::new(failed).retry_after(hint));
    }
}

impl<B, E> Body for GrpcBody<B, E>
where
    B: Body,
    B::Error: Into<BoxError>,
    E: ClassifyEos,
{
    type Data = B::Data;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if *this.cut {
            return Poll::Ready(None);
        }
        if let Some(watch) = this.watch.as_mut() {
            if this.deadline.passed(cx) {
                // Uncounted: the caller gave up, the system did not fail.
                *this.watch = None;
                *this.cut = true;
                return Poll::Ready(Some(Err(caller_deadline())));
            }
            if let Poll::Ready(timed_out) = watch.running.poll_expired(this.timer, cx) {
                *this.watch = None;
                *this.cut = true;
                return Poll::Ready(Some(Err(refusal(timed_out))));
            }
        }
        let frame = ready!(this.inner.poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(trailers) = frame.trailers_ref() {
                    end(this.watch.take(), Some(trailers));
                }
            }
            Some(Err(_)) => {
                // The stream broke: a failure.
                if let Some(Watch { running, .. }) = this.watch.take() {
                    let _ = running.finish(Verdict::FAILURE);
                }
            }
            None => end(this.watch.take(), None),
        }
        Poll::Ready(frame.map(|frame| frame.map_err(|error| status_of(error.into()))))
    }

    fn is_end_stream(&self) -> bool {
        // A body still guarded is polled to its end, where its call is judged.
        self.cut || (self.watch.is_none() && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http_body::Body;
    use http_body_util::{Empty, Full};
    use outbound_guard::{CircuitBreakerError, Guard, Settings};
    use outbound_guard::{Judge, RunningCall};
    use tower_http::classify::{ClassifiedResponse, ClassifyResponse};

    use super::GrpcBody;
    use crate::classify::TransientGrpc;

    /// A judge that hands the running call over, as the layer's does for a body.
    struct HandOver;

    impl Judge<()> for HandOver {
        type Output = RunningCall;

        fn judge(&mut self, (): (), call: RunningCall) -> Result<RunningCall, CircuitBreakerError> {
            Ok(call)
        }
    }

    async fn guarded<B: Body>(guard: &Guard, inner: B) -> GrpcBody<B> {
        let running = guard
            .call_judged(HandOver, async {})
            .await
            .expect("a closed breaker admits");
        // A 200 without a status in its headers: judged at the end of its body.
        let headers = http::Response::new(());
        let ClassifiedResponse::RequiresEos(eos) = TransientGrpc.classify_response(&headers) else {
            panic!("a streamed answer is judged at its end")
        };
        GrpcBody::guarded(inner, running, eos, None)
    }

    fn guard() -> Guard {
        let settings = Settings::parse("[systems.echo]", "inline").unwrap();
        Guard::new(settings.system("echo").unwrap())
    }

    #[tokio::test]
    async fn a_body_still_guarded_is_never_at_its_end_before_it_is_polled_there() {
        let guard = guard();
        assert!(GrpcBody::<_>::plain(Empty::<Bytes>::new()).is_end_stream());
        assert!(!GrpcBody::<_>::plain(Full::new(Bytes::from_static(b"abc"))).is_end_stream());
        // Its call is judged at the end it must be polled to.
        let body = guarded(&guard, Empty::<Bytes>::new()).await;
        assert!(!body.is_end_stream());
        assert_eq!(guard.in_flight(), 1, "the body holds the call's permit");
        drop(body);
        assert_eq!(guard.in_flight(), 0, "a body dropped early gives it back");
        assert_eq!(
            guard.breaker().snapshot().calls,
            0,
            "uncounted, as a cancelled call"
        );
    }

    #[tokio::test]
    async fn size_and_debug_say_what_the_body_is() {
        let body = GrpcBody::<_>::plain(Full::new(Bytes::from_static(b"abc")));
        assert_eq!(body.size_hint().exact(), Some(3));
        assert_eq!(format!("{body:?}"), "GrpcBody { guarded: false, .. }");
        let body = guarded(&guard(), Empty::<Bytes>::new()).await;
        assert_eq!(format!("{body:?}"), "GrpcBody { guarded: true, .. }");
    }
}
