//! The guard's steps of one call, as values a client integration can hold apart:
//! [`Admission`] (the bulkhead permit, then the breaker's permission), [`RunningCall`]
//! (what an admitted call holds, its span, its slow and total-timeout alarms, its
//! outcome) and [`CallTimer`] (the timer those alarms ride on, owned by whoever polls).
//! [`GuardedCall`](super::GuardedCall) is these steps around one future; a client whose
//! outcome is known only later (a gRPC call, judged by the trailers at the end of its
//! response body) moves the [`RunningCall`] on from the future that started it.

use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use super::judge;
use super::permit::{Permit, Slot};
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

/// A bulkhead wait in progress. Boxed: it is only built when the bulkhead is full on
/// arrival, and a named type keeps [`Admission`] non-generic.
type Wait = Pin<Box<dyn Future<Output = Result<Slot, CircuitBreakerError>> + Send>>;

/// The first two steps of a call as a future: a bulkhead permit (waiting at most
/// `bulkhead_wait`), then the breaker's permission. Ready with the [`RunningCall`], its
/// clock started, or with the guard's refusal
/// ([`Cause::BulkheadFull`](crate::Cause::BulkheadFull), [`Cause::Open`](crate::Cause::Open),
/// [`Cause::HalfOpenFull`](crate::Cause::HalfOpenFull),
/// [`Cause::ForcedOpen`](crate::Cause::ForcedOpen)), logged and reported to the observers.
/// Returned by [`Guard::admit`]; most code wants [`Guard::call`] instead.
///
/// Allocates nothing unless the bulkhead is full on arrival (the wait is then boxed);
/// dropped while waiting, it leaves the line and holds nothing.
#[must_use = "futures do nothing unless awaited"]
pub struct Admission {
    stage: Admitting,
}

enum Admitting {
    /// Not polled yet.
    Arrived(Guard),
    /// The bulkhead was full on arrival: waiting for a permit.
    Waiting(Wait),
    /// Admitted or refused.
    Done,
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Admission");
        match &self.stage {
            Admitting::Arrived(guard) => debug.field("arrived", guard),
            Admitting::Waiting(_) => debug.field("waiting_for_bulkhead", &true),
            Admitting::Done => debug.field("done", &true),
        };
        debug.finish_non_exhaustive()
    }
}

// The steps are not generic: compiled once, here. Inlined into the generic shell in
// optimised builds (`inline(always)`); debug builds call them in this crate, as compiled
// here (an `inline` hint would copy them into every crate with a guarded method, at
// opt-level 0 for nothing).
impl Admission {
    #[inline]
    pub(super) fn new(guard: Guard) -> Self {
        Admission {
            stage: Admitting::Arrived(guard),
        }
    }

    /// Whether it has completed: it then holds nothing (no guard, no wait).
    #[inline]
    pub(super) fn is_spent(&self) -> bool {
        matches!(self.stage, Admitting::Done)
    }

    /// The bulkhead was full on arrival: starts the wait for a slot, kept in `stage`.
    #[cold]
    fn wait(
        stage: &mut Admitting,
        guard: Guard,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Slot, CircuitBreakerError>> {
        *stage = Admitting::Waiting(Box::pin(Slot::wait(guard)));
        let Admitting::Waiting(wait) = stage else {
            unreachable!("set just above")
        };
        wait.as_mut().poll(cx)
    }
}

impl Future for Admission {
    type Output = Result<RunningCall, CircuitBreakerError>;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let stage = &mut self.stage;
        let slot = match stage {
            Admitting::Arrived(_) => {
                let Admitting::Arrived(guard) = std::mem::replace(stage, Admitting::Done) else {
                    unreachable!("matched just above")
                };
                match Slot::try_take(guard) {
                    Ok(slot) => Ok(slot),
                    Err(guard) => ready!(Self::wait(stage, guard, cx)),
                }
            }
            Admitting::Waiting(wait) => ready!(wait.as_mut().poll(cx)),
            Admitting::Done => panic!("`Admission` polled after it completed"),
        };
        *stage = Admitting::Done;
        Poll::Ready(
            slot.and_then(Permit::start)
                .map(|permit| RunningCall { permit }),
        )
    }
}

/// A call its guard admitted, still running: it holds the bulkhead permit, the
/// breaker's permission, the call's span and its clock (started when it was admitted).
/// From [`Admission`]; [`GuardedCall`](super::GuardedCall) holds one for its call.
///
/// Its holder polls the call inside [`poll_call`](Self::poll_call) (the span entered, a
/// panic recorded as a failure), keeps [`poll_expired`](Self::poll_expired) polled while
/// the call runs (a call still running at `cb_slow_threshold` counts as slow then; at
/// `total_timeout` it is recorded as timed out), and [`finish`](Self::finish)es it with
/// the call's verdict. Dropped unfinished, the call counts as cancelled: nothing is
/// recorded unless it had already been counted slow, and the breaker's permission (a
/// trial slot) goes back before the bulkhead permit. Drop it only after the call's own
/// future, so that the call's clean-up is over before the next caller gets in.
#[derive(Debug)]
#[must_use = "a running call dropped unfinished counts as cancelled"]
pub struct RunningCall {
    permit: Permit,
}

impl RunningCall {
    /// The guard that admitted the call.
    #[inline]
    pub fn guard(&self) -> &Guard {
        self.permit.guard()
    }

    /// When `total_timeout` ends the call.
    #[inline]
    pub fn deadline(&self) -> Instant {
        self.permit.deadline()
    }

    /// Runs `poll` (one poll of the call) inside the call's `guarded_call` span. A panic
    /// in it is recorded as a failure and unwinds on; the permits stay held until this
    /// is dropped.
    #[inline]
    pub fn poll_call<T>(&mut self, poll: impl FnOnce() -> T) -> T {
        let polled = {
            let _entered = self.permit.span().enter();
            catch_unwind(AssertUnwindSafe(poll))
        };
        match polled {
            Ok(polled) => polled,
            Err(panic) => {
                self.permit.panicked();
                resume_unwind(panic)
            }
        }
    }

    /// Ready with the guard's [`Cause::Timeout`](crate::Cause::Timeout) once
    /// `total_timeout` has elapsed, the call recorded as timed out (a failure); on the
    /// way, records the call as slow when `cb_slow_threshold` passes while it runs. Both
    /// count from the instant `timer` actually fired, so a late timer never shortens the
    /// breaker's open period. Poll it whenever the call's own poll is pending; after it
    /// is ready, drop the call's future, then this.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn poll_expired(
        &mut self,
        timer: Pin<&mut CallTimer>,
        cx: &mut Context<'_>,
    ) -> Poll<CircuitBreakerError> {
        let mut sleep = timer.project().sleep;
        if sleep.is_none() {
            sleep.set(Some(tokio::time::sleep_until(self.permit.next_alarm())));
        }
        let Some(mut sleep) = sleep.as_pin_mut() else {
            unreachable!("the timer was set up just above")
        };
        loop {
            ready!(sleep.as_mut().poll(cx));
            let now = Instant::now();
            match self.permit.alarm(now) {
                Some(next) => sleep.as_mut().reset(next),
                None => return Poll::Ready(self.permit.timed_out(now)),
            }
        }
    }

    /// The call ended now: `failed` if its answer counts against the system. The
    /// elapsed check then counts a call slower than `cb_slow_threshold` as a failure too,
    /// the outcome is recorded and reported, and the permits go back. A call already
    /// recorded (timed out, panicked) is not recorded again.
    #[inline]
    pub fn finish(self, failed: bool) {
        self.finish_with_retry_after(failed, None);
    }

    /// [`finish`](Self::finish), with the upstream's retry hint the answer carried
    /// (`Retry-After` of a 429 or 503, `grpc-retry-pushback-ms`): a failure with a hint
    /// makes the open period it starts, or the one running, last at least that long, at
    /// most `cb_open_max`. A hint on a call that did not fail is ignored.
    #[inline]
    pub fn finish_with_retry_after(mut self, failed: bool, retry_after: Option<Duration>) {
        if !self.permit.reported() {
            // `slow_as_error` would only turn an `Ok` into an error: nothing to return.
            let now = Instant::now();
            let _ = judge::record(&mut self.permit, failed, false, now, false, retry_after);
        }
        // The permits go back as `self` drops.
    }

    /// The permit, for the judge of a [`GuardedCall`](super::GuardedCall).
    #[inline]
    pub(super) fn permit_mut(&mut self) -> &mut Permit {
        &mut self.permit
    }
}

pin_project_lite::pin_project! {
    /// The timer a [`RunningCall`]'s alarms ride on: set up on the first
    /// [`poll_expired`](RunningCall::poll_expired) (a call that ends on its first poll
    /// never arms it), first at `cb_slow_threshold`, then at `total_timeout`. Owned
    /// (pinned) by whoever polls the call, so the [`RunningCall`] itself can move: a
    /// gRPC response body takes the call over with a timer of its own.
    #[derive(Debug, Default)]
    pub struct CallTimer {
        #[pin]
        sleep: Option<Sleep>,
    }
}

impl CallTimer {
    /// A timer not set up yet.
    pub const fn new() -> Self {
        CallTimer { sleep: None }
    }
}
