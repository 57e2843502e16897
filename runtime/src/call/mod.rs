//! One guarded call: [`GuardedCall`], the future of [`Guard::call`], [`Guard::call_with`],
//! the attributes' expansion and the tower layer.
//!
//! - `mod.rs`: the future itself, a thin shell generic over the call;
//! - `timer.rs`: everything of it but the call, compiled once: taking the permits, the
//!   slow threshold and the total timeout, a panic in the call;
//! - `permit.rs`: what a running call holds (the bulkhead slot, the breaker's permission,
//!   its clock) and gives back when dropped, and how the bulkhead is entered;
//! - `judge.rs`: the elapsed check and the outcome recorded;
//! - `report.rs`: the call's outcome told to the observers;
//! - `options.rs`: [`CallOptions`], how a call is judged.
//!
//! Only the shell is generic over the call: it projects its fields and hands the call on
//! behind `dyn` to [`poll_guarded`], which is generic over the call's output alone, and
//! the rest is not generic at all. So a crate with a hundred guarded methods does not
//! compile the steps in debug builds (they are the runtime's), and compiles the shell a
//! hundred times.

mod judge;
mod options;
mod permit;
mod report;
mod timer;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pub use self::options::CallOptions;
use self::timer::Timer;
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

pin_project_lite::pin_project! {
    /// One guarded call as a future: a bulkhead permit, the breaker's permission, the
    /// call under the total timeout, and the elapsed check that records its outcome. The
    /// outer `Err` is the guard's refusal, the inner `Result` the call's own. Returned by
    /// [`Guard::call`] and [`Guard::call_with`].
    ///
    /// Nothing happens until it is polled. It allocates nothing, unless the bulkhead is
    /// full on arrival: the wait for a permit is then boxed. Cut off by the total timeout,
    /// or dropped before it completes (cancelled, or unwinding from a panic in the call),
    /// it drops the call's future first and only then gives the breaker's permission and
    /// the bulkhead permit back: the call's clean-up (closing its connection) is over
    /// before the next caller gets in. Dropped while waiting for a bulkhead permit, it
    /// leaves the line.
    ///
    /// A call still running when `cb_slow_threshold` passes is counted as a failure then
    /// (a hanging system trips the breaker at the threshold, not at the timeout); a call
    /// that panics is recorded as a failure and the panic unwinds on; a panicking
    /// classifier, observer or metrics recorder is contained the same way.
    ///
    #[doc = include_str!("../../doc/guarded-call.md")]
    #[must_use = "futures do nothing unless awaited"]
    pub struct GuardedCall<'g, F, E> {
        // Field order is drop order: the call, then the timer holding the permits.
        #[pin]
        call: F,
        #[pin]
        timer: Timer<'g>,
        options: CallOptions<E>,
    }
}

impl<F, E> fmt::Debug for GuardedCall<'_, F, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedCall")
            .field("timer", &self.timer)
            .finish_non_exhaustive()
    }
}

impl<F, T, E> Future for GuardedCall<'_, F, E>
where
    F: Future<Output = Result<T, E>>,
{
    type Output = Result<Result<T, E>, CircuitBreakerError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        poll_guarded(this.timer, this.call, *this.options, cx)
    }
}

/// [`GuardedCall::poll`] but for the projection: generic over the call's output alone
/// (the call is polled behind `dyn`), so the methods of a port that return the same
/// `Result` share one copy.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_guarded<T, E>(
    mut timer: Pin<&mut Timer<'_>>,
    mut call: Pin<&mut (dyn Future<Output = Result<T, E>> + '_)>,
    options: CallOptions<E>,
    cx: &mut Context<'_>,
) -> Poll<Result<Result<T, E>, CircuitBreakerError>> {
    let mut output = None;
    let polled = timer
        .as_mut()
        .poll_call(cx, &mut |cx| match call.as_mut().poll(cx) {
            Poll::Ready(ended) => {
                output = Some(ended);
                true
            }
            Poll::Pending => false,
        });
    let end = match ready!(polled) {
        Ok(end) => end,
        Err(refused) => return Poll::Ready(Err(refused)),
    };
    let result = output.expect("the timer reports an end only once the call is ready");
    Poll::Ready(judge::judge(timer.stop(), result, end, options))
}

impl Guard {
    /// Runs `future` guarded, for code that does not use the attribute: the outer `Err`
    /// is the guard's, the inner `Result` the call's own. Every `Err` of the call counts
    /// as a failure; a slow call's value is returned. [`call_with`](Self::call_with)
    /// takes the attribute's options.
    ///
    /// The returned future does nothing until polled; see [`GuardedCall`] for what
    /// dropping it early gives back.
    ///
    /// # Errors
    ///
    /// The future's output is the guard's refusal (see [`call_with`](Self::call_with));
    /// the call's own error is the inner `Err`.
    #[inline]
    pub fn call<T, E, F>(&self, future: F) -> GuardedCall<'_, F, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        self.call_with(CallOptions::new(), future)
    }

    /// Runs `future` guarded and judged by `options`: what the attributes expand to.
    /// The outer `Err` is the guard's, the inner `Result` the call's own.
    ///
    /// In order: a bulkhead permit (waiting at most `bulkhead_wait`), the breaker's
    /// permission, the call under `total_timeout`, and the elapsed check: a call slower
    /// than `cb_slow_threshold` counts as a failure, and so does an `Err` the options'
    /// `failure_if` counts (every `Err` by default).
    ///
    /// When the bulkhead is full, an open breaker (not yet due for trials) or a forced
    /// open one turns the caller away at once, before it waits: the guide's breaker
    /// fails calls "immediately, without waiting". A full bulkhead is load, not the
    /// system's failure, and the breaker does not count it — unless the system is
    /// hanging: a caller that began waiting while a permit was held by a call already
    /// past `cb_slow_threshold`, and is turned away with every permit so held (no slow
    /// call having ended meanwhile), counts as one failure, while the breaker is closed
    /// and still in the state the wait began in (half-open, the trials alone decide).
    ///
    /// The returned future does nothing until polled; see [`GuardedCall`] for what
    /// dropping it early gives back.
    ///
    /// # Errors
    ///
    /// The future's output is the guard's refusal:
    /// [`Cause::BulkheadFull`](crate::Cause::BulkheadFull) when no bulkhead permit came
    /// within `bulkhead_wait`; [`Cause::Open`](crate::Cause::Open) while open (with the
    /// time left), [`Cause::HalfOpenFull`](crate::Cause::HalfOpenFull) while half-open
    /// with every trial taken, [`Cause::ForcedOpen`](crate::Cause::ForcedOpen) while forced
    /// open; [`Cause::Timeout`](crate::Cause::Timeout) when `total_timeout` cut the call
    /// off, and [`Cause::Slow`](crate::Cause::Slow) for a slow call under
    /// [`CallOptions::slow_as_error`]. The call's own error is the inner `Err`.
    #[inline]
    pub fn call_with<T, E, F>(&self, options: CallOptions<E>, future: F) -> GuardedCall<'_, F, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        GuardedCall {
            call: future,
            timer: Timer::new(self),
            options,
        }
    }
}
