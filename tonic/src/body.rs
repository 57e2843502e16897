//! [`GrpcBody`]: a gRPC response body whose call is still guarded until its status
//! comes in the trailers.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use http_body::{Body, Frame, SizeHint};
use tokio::time::Sleep;
use tonic::Status;

use crate::exchange::{deadline_passed, Call, Ending, Exchange};
use crate::status::{caller_deadline, refusal, status_of, BoxError};

pin_project_lite::pin_project! {
    /// The body of a response through a [`GrpcGuardService`](crate::GrpcGuardService).
    /// While the call's status is unknown it holds the guarded call: the bulkhead
    /// permit and the breaker's permission, under `total_timeout` and the caller's
    /// `grpc-timeout`. The trailers (or the end of the body) judge the call; an error
    /// of the body counts as a failure; a deadline passing ends the body with
    /// `DeadlineExceeded`; a body dropped before its end leaves the call uncounted, as
    /// a cancelled call.
    pub struct GrpcBody<B> {
        #[pin]
        inner: B,
        watch: Option<Watch<B>>,
        // The guard ended the body with an error: nothing more comes.
        cut: bool,
    }
}

/// What a body still guarded holds.
struct Watch<B> {
    call: Call,
    exchange: Arc<Exchange<B>>,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<B> std::fmt::Debug for GrpcBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcBody")
            .field("guarded", &self.watch.is_some())
            .finish_non_exhaustive()
    }
}

impl<B> GrpcBody<B> {
    /// A body whose call was already judged.
    pub(crate) fn plain(inner: B) -> Self {
        GrpcBody {
            inner,
            watch: None,
            cut: false,
        }
    }

    /// A body whose call is judged at its end.
    pub(crate) fn guarded(
        inner: B,
        call: Call,
        exchange: Arc<Exchange<B>>,
        deadline: Option<Pin<Box<Sleep>>>,
    ) -> Self {
        GrpcBody {
            inner,
            watch: Some(Watch {
                call,
                exchange,
                deadline,
            }),
            cut: false,
        }
    }
}

/// The body ended, or broke: the guarded call judges and records it now.
fn end<B>(watch: Option<Watch<B>>, ending: Ending, cx: &mut Context<'_>) {
    if let Some(mut watch) = watch {
        watch.exchange.end(ending);
        // Ready at once: the call was only waiting for the body's end.
        let _ = watch.call.as_mut().poll(cx);
    }
}

impl<B> Body for GrpcBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
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
            if deadline_passed(watch.deadline.as_mut(), cx) {
                *this.watch = None;
                *this.cut = true;
                return Poll::Ready(Some(Err(caller_deadline())));
            }
            if let Poll::Ready(ended) = watch.call.as_mut().poll(cx) {
                // Only the guard's timeout ends the call before the body does.
                *this.watch = None;
                if let Err(refused) = ended {
                    *this.cut = true;
                    return Poll::Ready(Some(Err(refusal(refused))));
                }
            }
        }
        let frame = ready!(this.inner.poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(trailers) = frame.trailers_ref() {
                    end(
                        this.watch.take(),
                        Ending::Trailers(Some(trailers.clone())),
                        cx,
                    );
                }
            }
            Some(Err(_)) => end(this.watch.take(), Ending::Broke, cx),
            None => end(this.watch.take(), Ending::Trailers(None), cx),
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
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body::Body;
    use http_body_util::{Empty, Full};

    use super::GrpcBody;
    use crate::exchange::Exchange;

    fn guarded<B: Body>(inner: B) -> GrpcBody<B> {
        let call = Box::pin(std::future::pending());
        GrpcBody::guarded(inner, call, Arc::new(Exchange::default()), None)
    }

    #[test]
    fn a_body_still_guarded_is_never_at_its_end_before_it_is_polled_there() {
        assert!(GrpcBody::plain(Empty::<Bytes>::new()).is_end_stream());
        assert!(!GrpcBody::plain(Full::new(Bytes::from_static(b"abc"))).is_end_stream());
        // Its call is judged at the end it must be polled to.
        assert!(!guarded(Empty::<Bytes>::new()).is_end_stream());
    }

    #[test]
    fn size_and_debug_say_what_the_body_is() {
        let body = GrpcBody::plain(Full::new(Bytes::from_static(b"abc")));
        assert_eq!(body.size_hint().exact(), Some(3));
        assert_eq!(format!("{body:?}"), "GrpcBody { guarded: false, .. }");
        let body = guarded(Empty::<Bytes>::new());
        assert_eq!(format!("{body:?}"), "GrpcBody { guarded: true, .. }");
    }
}
