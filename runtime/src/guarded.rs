//! [`GuardedCall`]: every step of a guarded call as one future, the future of
//! [`Guard::call`], [`Guard::call_with`] and the attributes' expansion.
//!
//! Only a thin shell is generic over the call: it projects its fields and hands the call
//! on behind `dyn` to [`poll_guarded`], which is generic over the call's output alone,
//! and the steps themselves (bulkhead, breaker, timer) are the non-generic [`Steps`]. So
//! a crate with a hundred guarded methods does not compile the steps at all in debug
//! builds (they are the runtime's), and compiles the shell a hundred times.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::call::{poll_into, BulkheadPermit, CallPermit, Finished, Stop, Timer};
use crate::error::CircuitBreakerError;
use crate::guard::Guard;
use crate::options::CallOptions;

pin_project_lite::pin_project! {
    /// Every step of one guarded call as a future: a bulkhead permit, the breaker's
    /// permission, the call under the total timeout, and the elapsed check that records
    /// its outcome. The outer `Err` is the guard's refusal, the inner `Result` the call's
    /// own. Returned by [`Guard::call`] and [`Guard::call_with`].
    ///
    /// Nothing happens until it is polled. It allocates nothing, unless the bulkhead is
    /// full on arrival: the wait for a permit is then boxed. Cut off by the total timeout,
    /// or dropped before it completes (cancelled, or unwinding from a panic in the call),
    /// it drops the call's future first and only then gives the bulkhead permit back, as
    /// [`TimedCall`](crate::TimedCall) does: the call's clean-up is over before the next
    /// caller gets in. Dropped while waiting for a bulkhead permit, it leaves the line.
    #[doc = include_str!("../doc/guarded-call.md")]
    #[must_use = "futures do nothing unless awaited"]
    pub struct GuardedCall<'g, F, E> {
        // Field order is drop order: the call, then the steps holding the permits.
        #[pin]
        pub(crate) call: F,
        #[pin]
        pub(crate) steps: Steps<'g>,
        pub(crate) options: CallOptions<E>,
    }
}

impl<F, E> fmt::Debug for GuardedCall<'_, F, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedCall")
            .field("steps", &self.steps)
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
        poll_guarded(this.steps, this.call, *this.options, cx)
    }
}

/// [`GuardedCall::poll`] but for the projection: generic over the call's output alone
/// (the call is polled behind `dyn`), so the methods of a port that return the same
/// `Result` share one copy.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_guarded<T, E>(
    mut steps: Pin<&mut Steps<'_>>,
    mut call: Pin<&mut (dyn Future<Output = Result<T, E>> + '_)>,
    options: CallOptions<E>,
    cx: &mut Context<'_>,
) -> Poll<Result<Result<T, E>, CircuitBreakerError>> {
    let mut result = None;
    let polled = steps
        .as_mut()
        .poll_steps(cx, &mut |cx| poll_into(call.as_mut(), &mut result, cx));
    let end = match ready!(polled) {
        Ok(end) => end,
        Err(refused) => return Poll::Ready(Err(refused)),
    };
    let finished = Finished::new(steps.stop(end), result, end);
    Poll::Ready(options.apply(finished).elapsed_check())
}

/// A bulkhead wait in progress. Boxed: it is only built when the bulkhead is full on
/// arrival, and a named type keeps [`Steps`] non-generic.
type Wait<'g> =
    Pin<Box<dyn Future<Output = Result<BulkheadPermit<'g>, CircuitBreakerError>> + Send + 'g>>;

pin_project_lite::pin_project! {
    /// Everything of a [`GuardedCall`] but the call: not generic, so compiled once.
    pub(crate) struct Steps<'g> {
        // `None` once the call was refused or has ended.
        guard: Option<&'g Guard>,
        // Field order is drop order: a bulkhead wait, or the timer with the permits.
        wait: Option<Wait<'g>>,
        #[pin]
        timer: Timer<'g>,
    }
}

impl fmt::Debug for Steps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steps")
            .field("guard", &self.guard)
            .field("waiting_for_bulkhead", &self.wait.is_some())
            .field("timer", &self.timer)
            .finish()
    }
}

// Inlined into the shells in optimised builds, as the timer's halves are (see `call.rs`).
impl<'g> Steps<'g> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn new(guard: &'g Guard) -> Self {
        Steps {
            guard: Some(guard),
            wait: None,
            timer: Timer::idle(),
        }
    }

    /// Takes a bulkhead permit and the breaker's permission, unless already held, then
    /// polls the call once through `poll` under the timer. Ready with the instant the
    /// call ended, or with the guard's refusal: the bulkhead's or the breaker's, or the
    /// total timeout. A timed-out call is recorded here, and its permits stay held until
    /// the [`GuardedCall`] is dropped, after the call's future: the call's clean-up
    /// (closing its connection) is over before the next caller gets in.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll_steps(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        poll: &mut dyn FnMut(&mut Context<'_>) -> bool,
    ) -> Poll<Result<Instant, CircuitBreakerError>> {
        let mut this = self.project();
        let guard = this.guard.expect("`GuardedCall` polled after it completed");
        if !this.timer.is_running() {
            let permit = match this.wait {
                Some(wait) => ready!(wait.as_mut().poll(cx)),
                None => match guard.try_bulkhead() {
                    Some(permit) => Ok(permit),
                    None => ready!(Self::wait_for_bulkhead(guard, this.wait, cx)),
                },
            };
            *this.wait = None;
            match permit.and_then(BulkheadPermit::ask_breaker) {
                Ok(call) => this.timer.as_mut().start(call),
                Err(refused) => {
                    *this.guard = None;
                    return Poll::Ready(Err(refused));
                }
            }
        }
        let mut timer = this.timer;
        match ready!(timer.as_mut().poll_call(cx, poll)) {
            Stop::Ended(end) => Poll::Ready(Ok(end)),
            Stop::TimedOut(end) => {
                *this.guard = None;
                Poll::Ready(Err(timer.time_out(end)))
            }
        }
    }

    /// The bulkhead was full on arrival: starts the wait for a permit, kept in `wait`.
    #[cold]
    fn wait_for_bulkhead(
        guard: &'g Guard,
        wait: &mut Option<Wait<'g>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BulkheadPermit<'g>, CircuitBreakerError>> {
        wait.insert(Box::pin(guard.wait_for_bulkhead()))
            .as_mut()
            .poll(cx)
    }

    /// Takes the call's permit out of the timer, with how long the call ran until `end`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn stop(self: Pin<&mut Self>, end: Instant) -> (CallPermit<'g>, Duration) {
        let this = self.project();
        *this.guard = None;
        this.timer.stop(end)
    }
}
