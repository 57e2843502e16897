//! [`Timer`]: everything of a [`GuardedCall`](super::GuardedCall) but the call, not
//! generic, so compiled once rather than once per guarded method.

use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::time::{Instant, Sleep};

use super::permit::{Permit, Slot};
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

/// A bulkhead wait in progress. Boxed: it is only built when the bulkhead is full on
/// arrival, and a named type keeps [`Timer`] non-generic.
type Wait<'g> = Pin<Box<dyn Future<Output = Result<Slot<'g>, CircuitBreakerError>> + Send + 'g>>;

pin_project_lite::pin_project! {
    /// The permits of one call and its timer. The timer is only set up if the call does
    /// not finish on its first poll. It first fires at the slow threshold: a call still
    /// running then is counted as slow at once, and the timer moves on to the total
    /// timeout.
    pub(super) struct Timer<'g> {
        // `None` once the call was refused or has ended.
        guard: Option<&'g Guard>,
        // Field order is drop order: a bulkhead wait, the timer, and only then the
        // permits.
        wait: Option<Wait<'g>>,
        #[pin]
        sleep: Option<Sleep>,
        permit: Option<Permit<'g>>,
    }
}

impl fmt::Debug for Timer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer")
            .field("guard", &self.guard)
            .field("waiting_for_bulkhead", &self.wait.is_some())
            .field("permit", &self.permit)
            .finish_non_exhaustive()
    }
}

// Inlined into the shell in optimised builds, as the permit's halves are (see
// `permit.rs`); debug builds call them here.
impl<'g> Timer<'g> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn new(guard: &'g Guard) -> Self {
        Timer {
            guard: Some(guard),
            wait: None,
            sleep: None,
            permit: None,
        }
    }

    /// Takes a bulkhead permit and the breaker's permission, unless already held, then
    /// polls the call once through `poll` (which says whether it is ready) inside the
    /// call's span. Ready with the instant the call ended, or with the guard's refusal:
    /// the bulkhead's or the breaker's, or the total timeout. A timed-out call is
    /// recorded here and its permits stay held until the timer is dropped, after the
    /// call's future. A panic in the call is recorded as a failure and unwinds on, the
    /// permits held likewise. `poll` is behind `dyn`, so that this is compiled once.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn poll_call(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        poll: &mut dyn FnMut(&mut Context<'_>) -> bool,
    ) -> Poll<Result<Instant, CircuitBreakerError>> {
        let this = self.project();
        let guard = this.guard.expect("`GuardedCall` polled after it completed");
        let permit = if let Some(permit) = this.permit {
            permit
        } else {
            let slot = match this.wait {
                Some(wait) => ready!(wait.as_mut().poll(cx)),
                None => match Slot::try_take(guard) {
                    Some(slot) => Ok(slot),
                    None => ready!(Self::wait(guard, this.wait, cx)),
                },
            };
            *this.wait = None;
            match slot.and_then(Permit::start) {
                Ok(permit) => this.permit.insert(permit),
                Err(refused) => {
                    *this.guard = None;
                    return Poll::Ready(Err(refused));
                }
            }
        };
        let polled = {
            let _entered = permit.span().enter();
            catch_unwind(AssertUnwindSafe(|| poll(cx)))
        };
        match polled {
            Ok(true) => Poll::Ready(Ok(Instant::now())),
            Ok(false) => {
                let end = ready!(Self::poll_expired(this.sleep, permit, cx));
                *this.guard = None;
                Poll::Ready(Err(permit.timed_out(end)))
            }
            Err(panic) => {
                // Recorded now; the permits stay here and go back when the timer is
                // dropped, after the call's future.
                permit.panicked();
                resume_unwind(panic);
            }
        }
    }

    /// The bulkhead was full on arrival: starts the wait for a slot, kept in `wait`.
    #[cold]
    fn wait(
        guard: &'g Guard,
        wait: &mut Option<Wait<'g>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Slot<'g>, CircuitBreakerError>> {
        wait.insert(Box::pin(Slot::wait(guard))).as_mut().poll(cx)
    }

    /// Ready with the instant the total timeout elapsed; on the way, records the call as
    /// slow when its threshold passes. Both count from the instant the timer actually
    /// fired, so a late timer never shortens the open period.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll_expired(
        mut sleep: Pin<&mut Option<Sleep>>,
        permit: &mut Permit<'g>,
        cx: &mut Context<'_>,
    ) -> Poll<Instant> {
        if sleep.is_none() {
            sleep.set(Some(tokio::time::sleep_until(permit.next_alarm())));
        }
        let mut sleep = sleep.as_pin_mut().expect("the timer was set up just above");
        loop {
            ready!(sleep.as_mut().poll(cx));
            let now = Instant::now();
            match permit.alarm(now) {
                Some(next) => sleep.as_mut().reset(next),
                None => return Poll::Ready(now),
            }
        }
    }

    /// Takes the call's permit out of the timer once the call ended in time.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn stop(self: Pin<&mut Self>) -> Permit<'g> {
        let this = self.project();
        *this.guard = None;
        this.permit
            .take()
            .expect("the timer reports an end only while it holds the permit")
    }
}
