//! One guarded call: [`GuardedCall`], the future of [`Guard::call`], [`Guard::call_with`],
//! the attributes' expansion and the tower layers; and its steps as values of their own
//! for client integrations ([`Admission`], [`RunningCall`], [`CallTimer`]).
//!
//! - `mod.rs`: the future, a thin shell generic over the call;
//! - `steps.rs`: the steps around the call, not generic: admission, the running call's
//!   span, alarms and verdict;
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
mod steps;

use std::fmt;
use std::future::Future;
use std::panic::resume_unwind;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::time::Instant;

pub use self::options::CallOptions;
pub use self::steps::{Admission, CallTimer, RunningCall};
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

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
    #[doc = include_str!("../../doc/guarded-call.md")]
    #[must_use = "futures do nothing unless awaited"]
    pub struct GuardedCall<F, E> {
        // Field order is drop order: the call, its timer, and only then its permits.
        #[pin]
        call: F,
        #[pin]
        timer: CallTimer,
        stage: Stage,
        options: CallOptions<E>,
    }
}

/// Where a call stands with its guard.
#[derive(Debug)]
enum Stage {
    /// Waiting for its permits (not polled yet, or the bulkhead was full).
    Admitting(Admission),
    /// Admitted and running.
    Running(RunningCall),
    /// Timed out, recorded: the permits are held until the future is dropped, after
    /// the call's (held for its `Drop` alone).
    Ended(#[allow(dead_code)] RunningCall),
    /// Refused, or judged.
    Done,
}

impl<F, E> fmt::Debug for GuardedCall<F, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedCall")
            .field("stage", &self.stage)
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
        poll_guarded(this.stage, this.timer, this.call, *this.options, cx)
    }
}

/// [`GuardedCall::poll`] but for the projection: generic over the call's output alone
/// (the call is polled behind `dyn`), so the methods of a port that return the same
/// `Result` share one copy; the steps around the call are not generic.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_guarded<T, E>(
    stage: &mut Stage,
    timer: Pin<&mut CallTimer>,
    mut call: Pin<&mut (dyn Future<Output = Result<T, E>> + '_)>,
    options: CallOptions<E>,
    cx: &mut Context<'_>,
) -> Poll<Result<Result<T, E>, CircuitBreakerError>> {
    let running = match stage {
        Stage::Running(running) => running,
        _ => match ready!(poll_admitted(stage, cx)) {
            Ok(running) => running,
            Err(refused) => return Poll::Ready(Err(refused)),
        },
    };
    match running.poll_call(|| call.as_mut().poll(cx)) {
        Poll::Ready(result) => {
            let end = Instant::now();
            // Judged where the permit lies (not moved out first), then the permits go
            // back: also before a panicking classifier's panic unwinds on.
            let judged = judge::judge(running.permit_mut(), result, end, options);
            *stage = Stage::Done;
            Poll::Ready(judged.unwrap_or_else(|panic| resume_unwind(panic)))
        }
        Poll::Pending => {
            let timed_out = ready!(running.poll_expired(timer, cx));
            ended(stage);
            Poll::Ready(Err(timed_out))
        }
    }
}

/// Polls the call's admission: ready with the running call, kept in `stage`, or with
/// the guard's refusal.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_admitted<'s>(
    stage: &'s mut Stage,
    cx: &mut Context<'_>,
) -> Poll<Result<&'s mut RunningCall, CircuitBreakerError>> {
    let Stage::Admitting(admission) = stage else {
        panic!("`GuardedCall` polled after it completed");
    };
    match ready!(Pin::new(admission).poll(cx)) {
        Ok(running) => {
            // The admission it replaces is spent (it holds nothing once ready): forgotten
            // rather than dropped, which saves its drop glue on every call.
            let spent = std::mem::replace(stage, Stage::Running(running));
            debug_assert!(matches!(&spent, Stage::Admitting(admission) if admission.is_spent()));
            std::mem::forget(spent);
            let Stage::Running(running) = stage else {
                unreachable!("set just above")
            };
            Poll::Ready(Ok(running))
        }
        Err(refused) => {
            *stage = Stage::Done;
            Poll::Ready(Err(refused))
        }
    }
}

/// The running call timed out: it stays in place, recorded, to give its permits back
/// when the future is dropped, after the call's.
#[cold]
fn ended(stage: &mut Stage) {
    if let Stage::Running(running) = std::mem::replace(stage, Stage::Done) {
        *stage = Stage::Ended(running);
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
    /// The returned future does nothing until polled; its steps, what each outcome
    /// counts as and what dropping it early gives back: [`GuardedCall`].
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
            timer: CallTimer::new(),
            stage: Stage::Admitting(Admission::new(self.clone())),
            options,
        }
    }
}

impl Guard {
    /// The first two steps of a call alone, for client integrations that hold a call's
    /// steps apart (see [`RunningCall`]): a bulkhead permit, then the breaker's
    /// permission. Most code wants [`call`](Self::call) or [`call_with`](Self::call_with).
    #[inline]
    pub fn admit(&self) -> Admission {
        Admission::new(self.clone())
    }
}
