//! One guarded call: [`GuardedCall`], the future of [`Guard::call`], [`Guard::call_judged`],
//! the attributes' expansion and the client layers, judged by a [`Judge`].
//!
//! - `call.rs` (this file): the future and its stages, a thin shell generic over the call;
//! - `running.rs`: what a call holds (the bulkhead [`Slot`], then the
//!   [`RunningCall`] with the breaker's ticket, its span and clock), how a slot is
//!   taken, and how a running call ends;
//! - `judge.rs`: [`Judge`], and [`CallOptions`]' judgement;
//! - `options.rs`: [`CallOptions`], the attribute's way of judging a call.
//!
//! Only the shell is generic over the call: two fields, the call and a [`Guarding`]
//! (the alarms, the stage and the judge, generic over the judge alone), and a poll that
//! hands the call on behind `dyn` to [`poll_guarded`], which is generic over the call's
//! output and its judge alone; the steps around it are not generic at all. So a crate
//! with a hundred guarded methods does not compile the steps in debug builds (they are
//! the runtime's), and compiles the shell, its projection and its drop glue a hundred
//! times.

mod judge;
mod options;
mod running;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::time::Sleep;

pub use self::judge::Judge;
pub use self::options::CallOptions;
pub use self::running::RunningCall;
use self::running::Slot;
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

/// A bulkhead wait in progress. Boxed: it is only built when the bulkhead is full on
/// arrival, and a named type keeps [`Stage`] non-generic.
type Wait = Pin<Box<dyn Future<Output = Result<Slot, CircuitBreakerError>> + Send>>;

pin_project_lite::pin_project! {
    /// One guarded call as a future: a bulkhead permit, the breaker's permission, the
    /// call under the total timeout, and the elapsed check that counts its outcome, as
    /// its judge `J` reads it ([`CallOptions`] for [`Guard::call`], [`Guard::call_judged`]
    /// and the attributes; the tower and tonic layers bring their own). The outer `Err`
    /// is the guard's refusal, the `Ok` what the judge returns (for [`CallOptions`], the
    /// call's own `Result`).
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
    #[doc = include_str!("../doc/guarded-call.md")]
    #[must_use = "futures do nothing unless awaited"]
    pub struct GuardedCall<F, J> {
        // Field order is drop order: the call, and only then its timer and permits.
        #[pin]
        pub(crate) call: F,
        // Everything else, generic over the judge alone: each call's type adds only this
        // struct's shell (its projection, its poll, its drop glue) to a crate's build.
        #[pin]
        pub(crate) guarding: Guarding<J>,
    }
}

pin_project_lite::pin_project! {
    /// What a [`GuardedCall`] holds besides the call: its alarms, its stage and its
    /// judge, shared by the calls judged alike.
    pub(crate) struct Guarding<J> {
        // The running call's alarms (slow threshold, then total timeout), armed on the
        // first poll that finds the call pending. Dropped before the stage's permits.
        #[pin]
        pub(crate) timer: Option<Sleep>,
        pub(crate) stage: Stage,
        pub(crate) judge: J,
    }
}

impl<J> Guarding<J> {
    /// [`GuardedCall::poll`] past the call's projection: the call is polled behind `dyn`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll_call<O>(
        self: Pin<&mut Self>,
        call: Pin<&mut (dyn Future<Output = O> + '_)>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<J::Output, CircuitBreakerError>>
    where
        J: Judge<O>,
    {
        let this = self.project();
        poll_guarded(this.stage, this.timer, call, this.judge, cx)
    }
}

/// Where a call stands with its guard.
pub(crate) enum Stage {
    /// Not polled yet.
    Arrived(Guard),
    /// The bulkhead was full on arrival: waiting for a permit.
    Waiting(Wait),
    /// Admitted and running.
    Running(RunningCall),
    /// Timed out, counted: the permits are held until the future is dropped, after
    /// the call's (held for its `Drop` alone).
    Ended(#[allow(dead_code)] RunningCall),
    /// Refused before it reached its guard (the call is another system's): the
    /// refusal, returned on the first poll without touching the guard.
    Refused(CircuitBreakerError),
    /// Refused, or judged.
    Done,
}

impl fmt::Debug for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Arrived(guard) => f.debug_tuple("Arrived").field(guard).finish(),
            Stage::Waiting(_) => f.write_str("WaitingForBulkhead"),
            Stage::Running(running) => f.debug_tuple("Running").field(running).finish(),
            Stage::Ended(running) => f.debug_tuple("Ended").field(running).finish(),
            Stage::Refused(refused) => f.debug_tuple("Refused").field(refused).finish(),
            Stage::Done => f.write_str("Done"),
        }
    }
}

impl<F, J> fmt::Debug for GuardedCall<F, J> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedCall")
            .field("stage", &self.guarding.stage)
            .finish_non_exhaustive()
    }
}

impl<F, J> Future for GuardedCall<F, J>
where
    F: Future,
    J: Judge<F::Output>,
{
    type Output = Result<J::Output, CircuitBreakerError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        this.guarding.poll_call(this.call, cx)
    }
}

/// [`GuardedCall::poll`] but for the projection: generic over the call's output and its
/// judge alone (the call is polled behind `dyn`), so the methods of a port that return
/// the same `Result` share one copy; the steps around the call are not generic.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_guarded<O, J: Judge<O>>(
    stage: &mut Stage,
    timer: Pin<&mut Option<Sleep>>,
    mut call: Pin<&mut (dyn Future<Output = O> + '_)>,
    judge: &mut J,
    cx: &mut Context<'_>,
) -> Poll<Result<J::Output, CircuitBreakerError>> {
    let running = match stage {
        Stage::Running(running) => running,
        _ => match ready!(poll_admitted(stage, cx)) {
            Ok(running) => running,
            Err(refused) => return Poll::Ready(Err(refused)),
        },
    };
    match running.poll_call(|| call.as_mut().poll(cx)) {
        Poll::Ready(output) => {
            let Stage::Running(running) = std::mem::replace(stage, Stage::Done) else {
                unreachable!("matched just above")
            };
            // The judge finishes the running call (its permits go back as it drops,
            // also before a panicking classifier's panic unwinds on), or hands it on.
            Poll::Ready(judge.judge(output, running))
        }
        Poll::Pending => {
            let timed_out = ready!(running.poll_expired(timer, cx));
            ended(stage);
            Poll::Ready(Err(timed_out))
        }
    }
}

/// Polls the call's admission: a bulkhead slot (waiting at most `bulkhead_wait`), then
/// the breaker's ticket. Ready with the running call, kept in `stage`, or with the
/// guard's refusal, logged and reported to the observers.
#[cfg_attr(not(debug_assertions), inline(always))]
fn poll_admitted<'s>(
    stage: &'s mut Stage,
    cx: &mut Context<'_>,
) -> Poll<Result<&'s mut RunningCall, CircuitBreakerError>> {
    let slot = match stage {
        Stage::Arrived(_) => {
            let Stage::Arrived(guard) = std::mem::replace(stage, Stage::Done) else {
                unreachable!("matched just above")
            };
            match Slot::try_take(guard) {
                Ok(slot) => Ok(slot),
                Err(guard) => ready!(wait(stage, guard, cx)),
            }
        }
        Stage::Waiting(_) => ready!(poll_wait(stage, cx)),
        Stage::Refused(_) => return Poll::Ready(Err(take_refusal(stage))),
        _ => panic!("`GuardedCall` polled after it completed"),
    };
    match slot.and_then(RunningCall::start) {
        Ok(running) => {
            // The stage it replaces is spent (`Done`: a guard taken, a wait over):
            // forgotten rather than dropped, which saves its drop glue on every call.
            let spent = std::mem::replace(stage, Stage::Running(running));
            debug_assert!(matches!(spent, Stage::Done));
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

/// The bulkhead was full on arrival: starts the wait for a slot, kept in `stage`.
#[cold]
fn wait(
    stage: &mut Stage,
    guard: Guard,
    cx: &mut Context<'_>,
) -> Poll<Result<Slot, CircuitBreakerError>> {
    *stage = Stage::Waiting(Box::pin(Slot::wait(guard)));
    poll_wait(stage, cx)
}

/// Polls the wait for a bulkhead slot; once it is over, `stage` is `Done` (the wait
/// dropped).
#[cold]
fn poll_wait(stage: &mut Stage, cx: &mut Context<'_>) -> Poll<Result<Slot, CircuitBreakerError>> {
    let Stage::Waiting(wait) = stage else {
        unreachable!("called while waiting")
    };
    let slot = ready!(wait.as_mut().poll(cx));
    *stage = Stage::Done;
    Poll::Ready(slot)
}

/// The refusal a call brought with it (see [`Stage::Refused`]); `stage` is `Done`.
#[cold]
fn take_refusal(stage: &mut Stage) -> CircuitBreakerError {
    let Stage::Refused(refused) = std::mem::replace(stage, Stage::Done) else {
        unreachable!("called when refused")
    };
    refused
}

/// The running call timed out: it stays in place, counted, to give its permits back
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
    /// as a failure; a slow call's value is returned. [`call_judged`](Self::call_judged)
    /// with [`CallOptions`] takes the attribute's options.
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
    /// off. The call's own error is the inner `Err`.
    #[inline]
    pub fn call<T, E, F>(&self, future: F) -> GuardedCall<F, CallOptions<E>>
    where
        F: Future<Output = Result<T, E>>,
    {
        judged(self, CallOptions::new(), future)
    }

    /// Runs `future` guarded and judged by `options`.
    #[deprecated(
        since = "0.2.0",
        note = "use `call_judged(options, future)`: the same call, judged by the same `CallOptions`"
    )]
    #[inline]
    pub fn call_with<T, E, F>(
        &self,
        options: CallOptions<E>,
        future: F,
    ) -> GuardedCall<F, CallOptions<E>>
    where
        F: Future<Output = Result<T, E>>,
    {
        judged(self, options, future)
    }

    /// Runs `future` guarded and judged by `judge`: the attribute's options as values
    /// ([`CallOptions`]: `failure_if`, `retry_after`, `slow_as_error`), or a judge of a
    /// client of any kind (a message producer, a database driver, a hand-written hyper
    /// service) whose outcomes count its own way; the tower and tonic layers are this
    /// with theirs. [`Judge`] shows one. The outer `Err` is the guard's, the `Ok` what
    /// the judge returns (for [`CallOptions`], the call's own `Result`).
    ///
    /// The returned future does nothing until polled; its steps, what each outcome
    /// counts as and what dropping it early gives back: [`GuardedCall`].
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call): the future's output is the guard's refusal, or
    /// [`Cause::Slow`](crate::Cause::Slow) for a slow call under
    /// [`CallOptions::slow_as_error`] (or from a judge that returns slow calls as
    /// errors).
    #[inline]
    pub fn call_judged<F, J>(&self, judge: J, future: F) -> GuardedCall<F, J>
    where
        F: Future,
        J: Judge<F::Output>,
    {
        judged(self, judge, future)
    }
}

/// Where a call of the system `wanted` through `guard` starts: arrived at it, or, when
/// `guard` is another system's, refused (on its first poll, with
/// [`Cause::WrongGuard`](crate::Cause::WrongGuard), without touching that guard). Not
/// generic: the attributes' helper builds its call around it in place (inlined in
/// release builds, so that the comparison is with the caller's literal).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn arrival(guard: &Guard, wanted: &'static str) -> Stage {
    if guard.system() == wanted {
        Stage::Arrived(guard.clone())
    } else {
        Stage::Refused(wrong_guard(guard, wanted))
    }
}

/// The refusal of a `wanted` call that reached `guard`, another system's.
#[cold]
#[inline(never)]
fn wrong_guard(guard: &Guard, wanted: &'static str) -> CircuitBreakerError {
    CircuitBreakerError::from_cause(guard.system(), crate::error::Cause::WrongGuard { wanted })
}

/// `future` guarded by `guard` and judged by `judge` ([`Guard::call_judged`]).
#[inline]
pub(crate) fn judged<F: Future, J: Judge<F::Output>>(
    guard: &Guard,
    judge: J,
    future: F,
) -> GuardedCall<F, J> {
    let stage = Stage::Arrived(guard.clone());
    GuardedCall {
        call: future,
        guarding: Guarding {
            timer: None,
            stage,
            judge,
        },
    }
}
