//! One guarded call: [`GuardedCall`], the future of [`Guard::call`], [`Guard::call_with`],
//! the attributes' expansion and the tower layers.
//!
//! - `mod.rs`: the future and its steps: taking the permits, polling the call inside
//!   its span, the slow threshold and the total timeout, a panic in the call;
//! - `permit.rs`: what a running call holds (the bulkhead slot, the breaker's ticket,
//!   its clock, a clone of the guard) and gives back when dropped, and how the bulkhead
//!   is entered;
//! - `judge.rs`: the elapsed check and the outcome recorded;
//! - `options.rs`: [`CallOptions`], how a call is judged.
//!
//! Only the shell is generic over the call: it projects its fields and hands the call on
//! behind `dyn` to [`poll_guarded`], which is generic over the call's output alone, and
//! the steps around it are not generic at all. So a crate with a hundred guarded methods
//! does not compile the steps in debug builds (they are the runtime's), and compiles the
//! shell a hundred times.

mod judge;
mod options;
mod permit;

use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::time::{Instant, Sleep};

pub use self::options::CallOptions;
use self::permit::{Permit, Slot};
use crate::error::CircuitBreakerError;
use crate::guard::Guard;
use crate::hooks::CallSpan;

pin_project_lite::pin_project! {
    /// One guarded call as a future: a bulkhead permit, the breaker's permission, the
    /// call under the total timeout, and the elapsed check that records its outcome. The
    /// outer `Err` is the guard's refusal, the inner `Result` the call's own. Returned by
    /// [`Guard::call`] and [`Guard::call_with`].
    ///
    /// It owns a clone of its [`Guard`] (one reference-count increment per call) and
    /// borrows nothing, so it is `'static` whenever the call's future is: a tower layer
    /// returns it as it is, unboxed. Nothing happens until it is polled. It allocates
    /// nothing, unless the bulkhead is full on arrival: the wait for a permit is then
    /// boxed. Cut off by the total timeout, or dropped before it completes (cancelled,
    /// or unwinding from a panic in the call), it drops the call's future first and only
    /// then gives the breaker's permission and the bulkhead permit back: the call's
    /// clean-up (closing its connection) is over before the next caller gets in. Dropped
    /// while waiting for a bulkhead permit, it leaves the line.
    ///
    /// A call still running when `cb_slow_threshold` passes is counted as a failure then
    /// (a hanging system trips the breaker at the threshold, not at the timeout); a call
    /// that panics is recorded as a failure and the panic unwinds on; a panicking
    /// classifier, observer or metrics recorder is contained the same way.
    ///
    #[doc = include_str!("../../doc/guarded-call.md")]
    #[must_use = "futures do nothing unless awaited"]
    pub struct GuardedCall<F, E> {
        // Field order is drop order: the call, then the guard's part holding the permits.
        #[pin]
        call: F,
        #[pin]
        steps: Steps,
        options: CallOptions<E>,
    }
}

impl<F, E> fmt::Debug for GuardedCall<F, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedCall")
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl<F, T, E> Future for GuardedCall<F, E>
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
/// `Result` share one copy; the steps around the call are not generic.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_guarded<T, E>(
    mut steps: Pin<&mut Steps>,
    mut call: Pin<&mut (dyn Future<Output = Result<T, E>> + '_)>,
    options: CallOptions<E>,
    cx: &mut Context<'_>,
) -> Poll<Result<Result<T, E>, CircuitBreakerError>> {
    if let Err(refused) = ready!(steps.as_mut().poll_admitted(cx)) {
        return Poll::Ready(Err(refused));
    }
    let polled = {
        let _entered = steps.span().enter();
        catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx)))
    };
    match polled {
        Ok(Poll::Ready(result)) => {
            let end = Instant::now();
            // Judged where the permit lies (not moved out first), then the permits go
            // back: also before a panicking classifier's panic unwinds on.
            let judged = judge::judge(steps.as_mut().permit(), result, end, options);
            steps.done();
            Poll::Ready(judged.unwrap_or_else(|panic| resume_unwind(panic)))
        }
        Ok(Poll::Pending) => steps.poll_expired(cx).map(Err),
        Err(panic) => {
            // Recorded now; the permits stay here and go back when the steps are
            // dropped, after the call's future.
            steps.panicked();
            resume_unwind(panic)
        }
    }
}

/// A bulkhead wait in progress. Boxed: it is only built when the bulkhead is full on
/// arrival, and a named type keeps [`Steps`] non-generic.
type Wait = Pin<Box<dyn Future<Output = Result<Slot, CircuitBreakerError>> + Send>>;

/// Where a call stands with its guard.
enum Stage {
    /// Not polled yet.
    Arrived(Guard),
    /// The bulkhead was full on arrival: waiting for a permit.
    Waiting(Wait),
    /// Admitted and running, holding its permits.
    Running(Permit),
    /// Timed out or panicked, recorded: the permits are held until the steps are
    /// dropped, after the call's future.
    Ended(Permit),
    /// Refused, or judged.
    Done,
}

pin_project_lite::pin_project! {
    /// Everything of a [`GuardedCall`] but the call, not generic, so compiled once
    /// rather than once per guarded method: its stage and its timer. The timer is only
    /// set up if the call does not finish on its first poll. It first fires at the slow
    /// threshold: a call still running then is counted as slow at once, and the timer
    /// moves on to the total timeout.
    struct Steps {
        // Field order is drop order: the timer, then the stage (a bulkhead wait, or the
        // permits).
        #[pin]
        sleep: Option<Sleep>,
        stage: Stage,
    }
}

impl fmt::Debug for Steps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Steps");
        match &self.stage {
            Stage::Arrived(guard) => debug.field("arrived", guard),
            Stage::Waiting(_) => debug.field("waiting_for_bulkhead", &true),
            Stage::Running(permit) => debug.field("running", permit),
            Stage::Ended(permit) => debug.field("ended", permit),
            Stage::Done => debug.field("done", &true),
        };
        debug.finish_non_exhaustive()
    }
}

// Inlined into the shell in optimised builds, as the permit's halves are (see
// `permit.rs`); debug builds call them here.
impl Steps {
    #[inline]
    fn new(guard: Guard) -> Self {
        Steps {
            sleep: None,
            stage: Stage::Arrived(guard),
        }
    }

    /// Takes a bulkhead permit and the breaker's permission, unless already held: ready
    /// once the call may run, or with the guard's refusal (the bulkhead's or the
    /// breaker's).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll_admitted(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), CircuitBreakerError>> {
        let stage = self.project().stage;
        let slot = match stage {
            Stage::Running(_) => return Poll::Ready(Ok(())),
            Stage::Arrived(_) => {
                let Stage::Arrived(guard) = std::mem::replace(stage, Stage::Done) else {
                    unreachable!("matched just above")
                };
                match Slot::try_take(guard) {
                    Ok(slot) => Ok(slot),
                    Err(guard) => ready!(Self::wait(stage, guard, cx)),
                }
            }
            Stage::Waiting(wait) => ready!(wait.as_mut().poll(cx)),
            Stage::Ended(_) | Stage::Done => panic!("`GuardedCall` polled after it completed"),
        };
        Poll::Ready(match slot.and_then(Permit::start) {
            Ok(permit) => {
                *stage = Stage::Running(permit);
                Ok(())
            }
            Err(refused) => {
                *stage = Stage::Done;
                Err(refused)
            }
        })
    }

    /// The bulkhead was full on arrival: starts the wait for a slot, kept in `stage`.
    #[cold]
    fn wait(
        stage: &mut Stage,
        guard: Guard,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Slot, CircuitBreakerError>> {
        *stage = Stage::Waiting(Box::pin(Slot::wait(guard)));
        let Stage::Waiting(wait) = stage else {
            unreachable!("set just above")
        };
        wait.as_mut().poll(cx)
    }

    /// The running call's span, to enter for one poll of the call.
    #[inline]
    fn span(&self) -> &CallSpan {
        match &self.stage {
            Stage::Running(permit) => permit.span(),
            _ => unreachable!("the call is polled only while admitted"),
        }
    }

    /// Ready with the guard's timeout once `total_timeout` elapses, the call recorded
    /// as timed out (its permits stay held until the steps are dropped, after the
    /// call's future); on the way, records the call as slow when its threshold passes.
    /// Both count from the instant the timer actually fired, so a late timer never
    /// shortens the open period.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll_expired(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CircuitBreakerError> {
        let this = self.project();
        let Stage::Running(permit) = this.stage else {
            unreachable!("the call is timed only while admitted")
        };
        let mut sleep = this.sleep;
        if sleep.is_none() {
            sleep.set(Some(tokio::time::sleep_until(permit.next_alarm())));
        }
        let mut sleep = sleep.as_pin_mut().expect("the timer was set up just above");
        loop {
            ready!(sleep.as_mut().poll(cx));
            let now = Instant::now();
            if let Some(next) = permit.alarm(now) {
                sleep.as_mut().reset(next);
            } else {
                return Poll::Ready(Self::end(this.stage).timed_out(now));
            }
        }
    }

    /// The call panicked: recorded as a failure, its permits kept until the steps are
    /// dropped.
    #[cold]
    fn panicked(self: Pin<&mut Self>) {
        Self::end(self.project().stage).panicked();
    }

    /// The running call ended early (timed out, panicked): its permit stays in place,
    /// to go back when the steps are dropped, after the call's future.
    #[cold]
    fn end(stage: &mut Stage) -> &mut Permit {
        let Stage::Running(permit) = std::mem::replace(stage, Stage::Done) else {
            unreachable!("a call ends early only while running")
        };
        *stage = Stage::Ended(permit);
        let Stage::Ended(permit) = stage else {
            unreachable!("set just above")
        };
        permit
    }

    /// The running call's permit, to judge the call by once it ended in time.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn permit(self: Pin<&mut Self>) -> &mut Permit {
        match self.project().stage {
            Stage::Running(permit) => permit,
            _ => unreachable!("the call ends only while admitted"),
        }
    }

    /// The call was judged: its permits go back now.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn done(self: Pin<&mut Self>) {
        *self.project().stage = Stage::Done;
    }
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
    pub fn call<T, E, F>(&self, future: F) -> GuardedCall<F, E>
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
    pub fn call_with<T, E, F>(&self, options: CallOptions<E>, future: F) -> GuardedCall<F, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        GuardedCall {
            call: future,
            steps: Steps::new(self.clone()),
            options,
        }
    }
}
