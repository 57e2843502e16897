//! The steps of one guarded call after the guard itself: breaker permission, the call
//! under the total timeout, and the elapsed check that records the outcome.
//!
//! Each step hands the next a value that owns everything taken so far, so a caller that
//! drops the call at any point gives every permit back; nothing is recorded unless the
//! call had already run past its slow threshold, which counted it as slow then.

use std::future::Future;
use std::mem;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::breaker::BreakerPermit;
use crate::error::{Cause, CircuitBreakerError};
use crate::guard::Guard;
use crate::log::CallSpan;
use crate::observer::{CallEvent, Outcome};

/// Holds a bulkhead permit; next, ask the breaker with [`ask_breaker`](Self::ask_breaker).
#[derive(Debug)]
#[must_use = "the bulkhead permit is released when this is dropped"]
pub struct BulkheadPermit<'g> {
    slot: Slot<'g>,
}

/// A bulkhead permit of `guard`'s bulkhead, returned when dropped. With metrics, taking
/// and returning it moves the in-use gauge. One pointer: the guard reaches everything.
#[derive(Debug)]
struct Slot<'g> {
    guard: &'g Guard,
}

impl Drop for Slot<'_> {
    #[inline]
    fn drop(&mut self) {
        self.guard.bulkhead_ref().release();
        #[cfg(any(feature = "metrics", test))]
        if let Some(metrics) = self.guard.metrics() {
            // The recorder is user code and this may run while unwinding, where a
            // second panic would abort the process.
            let _ = catch_unwind(AssertUnwindSafe(|| metrics.bulkhead_returned()));
        }
    }
}

impl<'g> BulkheadPermit<'g> {
    /// Wraps a permit just taken from `guard`'s bulkhead.
    #[inline]
    pub(crate) fn new(guard: &'g Guard) -> Self {
        // Owned first: a panicking metrics recorder then returns the permit as it unwinds.
        let permit = BulkheadPermit {
            slot: Slot { guard },
        };
        #[cfg(any(feature = "metrics", test))]
        if let Some(metrics) = guard.metrics() {
            metrics.bulkhead_taken();
        }
        permit
    }

    /// Step 2: the breaker's permission. Rejected at once while open, and while
    /// half-open beyond the trial calls; the bulkhead permit is released then.
    ///
    /// # Errors
    ///
    /// [`Cause::Open`](crate::Cause::Open) while open (with the time left),
    /// [`Cause::HalfOpenFull`](crate::Cause::HalfOpenFull) while half-open with every trial
    /// taken, [`Cause::ForcedOpen`](crate::Cause::ForcedOpen) while forced open.
    #[inline]
    pub fn ask_breaker(self) -> Result<CallPermit<'g>, CircuitBreakerError> {
        let guard = self.slot.guard;
        match guard.breaker().try_acquire() {
            Ok(breaker) => Ok(CallPermit {
                breaker: Recording::Pending(breaker),
                span: CallSpan::none(),
                slot: self.slot,
            }),
            Err(error) => {
                report_rejection(guard, error.cause());
                Err(error)
            }
        }
    }
}

/// Holds the bulkhead permit and the breaker's permission; next, run the call with
/// [`timeout`](Self::timeout).
#[derive(Debug)]
#[must_use = "dropping the permit abandons the call without recording it"]
pub struct CallPermit<'g> {
    // Declared before the bulkhead permit: dropped first, so a trial slot is back
    // before the bulkhead lets the next caller in.
    breaker: Recording<'g>,
    /// `guarded_call{system, outcome}`, from [`timeout`](Self::timeout) on; one pointer,
    /// null unless a subscriber wants the span.
    span: CallSpan,
    /// The bulkhead permit, and the guard.
    slot: Slot<'g>,
}

impl<'g> CallPermit<'g> {
    /// Step 3: runs `call` under `total_timeout`, which cancels it. The start instant
    /// read here serves both the deadline and the elapsed check.
    ///
    /// The call runs inside a `guarded_call` span (feature `tracing`, INFO, target
    /// `outbound_guard`) with the fields `system` and, once it ends, `outcome`.
    #[inline]
    pub fn timeout<F>(self, call: F) -> TimedCall<'g, F> {
        TimedCall {
            call,
            timer: self.start_timer(),
        }
    }

    /// The timer of [`timeout`](Self::timeout), started: everything of it but the call.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn start_timer(self) -> Timer<'g> {
        Timer {
            sleep: None,
            clock: Some(self.start_clock()),
        }
    }

    /// Starts the clock of the call this permits (inlined as the timer's halves are).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn start_clock(mut self) -> Clock<'g> {
        let guard = self.slot.guard;
        self.span = CallSpan::new(guard.system());
        let start = Instant::now();
        let settings = guard.settings();
        let deadline = start + settings.total_timeout();
        // A call still running when this timer fires runs longer than the threshold:
        // one that ends exactly then is polled (and finished) before the timer is.
        let slow_at = start + settings.cb_slow_threshold();
        Clock {
            permit: self,
            start,
            slow_at: (slow_at < deadline).then_some(slow_at),
            deadline,
        }
    }

    /// The call is still running past its slow threshold: count it as a failure now,
    /// so a system that hangs trips the breaker at the threshold, not at the timeout.
    /// Its end is still reported when it comes; it is not recorded again.
    #[cold]
    fn record_slow(&mut self, now: Instant) {
        if let Recording::Pending(breaker) = mem::replace(&mut self.breaker, Recording::Counted) {
            self.slot.guard.slow_holders().counted_slow();
            breaker.record_at(true, now);
        }
    }

    /// Records the outcome and reports the call to the observers; the permits go back
    /// as `self` is dropped.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn finish(mut self, failed: bool, outcome: Outcome, elapsed: Duration, now: Instant) {
        self.report_end(failed, outcome, elapsed, now);
    }

    /// Records the outcome and reports the call to the observers, keeping the permits:
    /// the caller returns them later (a panicking call's, once its future is dropped).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn report_end(&mut self, failed: bool, outcome: Outcome, elapsed: Duration, now: Instant) {
        let guard = self.slot.guard;
        match mem::replace(&mut self.breaker, Recording::Reported) {
            Recording::Pending(breaker) => breaker.record_at(failed, now),
            Recording::Counted => guard.slow_holders().ended(),
            Recording::Reported => {}
        }
        self.span.record(outcome.as_str());
        report(guard, outcome, Some(elapsed));
        #[cfg(any(feature = "metrics", test))]
        if let Some(metrics) = guard.metrics() {
            // Shown, then read again: a rate another thread recorded after this one read
            // its own is shown again, so the last value shown is the last one counted.
            let breaker = guard.breaker();
            let mut rate = breaker.failure_rate();
            loop {
                metrics.recorded(rate);
                let again = breaker.failure_rate();
                if again.to_bits() == rate.to_bits() {
                    break;
                }
                rate = again;
            }
        }
    }
}

impl Drop for CallPermit<'_> {
    #[inline]
    fn drop(&mut self) {
        // Before the bulkhead permit goes back (the fields drop after this).
        if matches!(self.breaker, Recording::Counted) {
            self.slot.guard.slow_holders().ended();
        }
        if !matches!(self.breaker, Recording::Reported) {
            self.span.record(Outcome::Cancelled.as_str());
            report(self.slot.guard, Outcome::Cancelled, None);
        }
    }
}

/// Where a call's outcome stands with the breaker. Dropping a `Pending` permit returns
/// its place (a trial slot) without recording anything.
#[derive(Debug)]
enum Recording<'g> {
    /// Not recorded yet.
    Pending(BreakerPermit<'g>),
    /// Recorded as slow while still running; its end is still to be reported.
    Counted,
    /// Ended and reported to the observers.
    Reported,
}

pin_project_lite::pin_project! {
    /// The call under its total timeout: a future of the call's [`Finished`] outcome.
    ///
    /// The timer is only set up if the call does not finish on its first poll. It first
    /// fires at the slow threshold: a call still running then is counted as slow at once
    /// (a hanging system trips the breaker there, not at the timeout), and the timer moves
    /// on to the total timeout. Both count from the instant the timer actually fired, so
    /// a late timer never shortens the open period. A panic in the call is recorded as a
    /// failure and then continues unwinding.
    ///
    /// Dropped before it completes (cancelled, or unwinding from a panic), it drops the
    /// call's future first and only then returns the bulkhead permit: the call's own
    /// clean-up (closing its connection) is over before the next caller gets in.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless awaited"]
    pub struct TimedCall<'g, F> {
        // Field order is drop order: the call, then its timer and the permits.
        #[pin]
        call: F,
        #[pin]
        timer: Timer<'g>,
    }
}

pin_project_lite::pin_project! {
    /// Everything of a [`TimedCall`] but the call: not generic, so compiled once rather
    /// than once per guarded method.
    #[derive(Debug)]
    pub(crate) struct Timer<'g> {
        // Field order is drop order: the timer, and only then the permits.
        #[pin]
        sleep: Option<Sleep>,
        // `None` until started, and once stopped.
        clock: Option<Clock<'g>>,
    }
}

/// A started [`Timer`]'s permits and instants.
#[derive(Debug)]
pub(crate) struct Clock<'g> {
    permit: CallPermit<'g>,
    start: Instant,
    // When a still-running call becomes slow; `None` once that has been recorded.
    slow_at: Option<Instant>,
    deadline: Instant,
}

/// How a call polled under its [`Timer`] stopped, and when.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    /// The call ended (its output is with whoever polled it).
    Ended(Instant),
    /// The total timeout elapsed first.
    TimedOut(Instant),
}

impl Stop {
    /// When the call stopped.
    fn at(self) -> Instant {
        match self {
            Stop::Ended(at) | Stop::TimedOut(at) => at,
        }
    }
}

impl<'g, F, T, E> Future for TimedCall<'g, F>
where
    F: Future<Output = Result<T, E>>,
{
    type Output = Finished<'g, T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut call = this.call;
        let mut timer = this.timer;
        let mut result = None;
        let stop = ready!(timer.as_mut().poll_call(cx, &mut |cx| poll_into(
            call.as_mut(),
            &mut result,
            cx
        )));
        let end = stop.at();
        Poll::Ready(Finished::new(timer.stop(end), result, end))
    }
}

/// Polls `call` once for [`Timer::poll_call`]: `true` once it is ready, its output then
/// in `output`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn poll_into<F: Future + ?Sized>(
    call: Pin<&mut F>,
    output: &mut Option<F::Output>,
    cx: &mut Context<'_>,
) -> bool {
    match call.poll(cx) {
        Poll::Ready(ended) => {
            *output = Some(ended);
            true
        }
        Poll::Pending => false,
    }
}

// The non-generic halves below are inlined into the generic shells in optimised builds
// (`inline(always)`: the hot path stays one function, as cheap as before they were split
// out). Debug builds call them in this crate, as compiled here: an `inline` hint there
// would copy them into every crate with a guarded method, at opt-level 0 for nothing.
impl<'g> Timer<'g> {
    /// A timer not started yet: [`start`](Self::start) it with the call's permit.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn idle() -> Self {
        Timer {
            sleep: None,
            clock: None,
        }
    }

    /// Whether the timer was started (and not stopped since).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn is_running(&self) -> bool {
        self.clock.is_some()
    }

    /// Starts the idle timer for the call `permit` lets through.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn start(self: Pin<&mut Self>, permit: CallPermit<'g>) {
        *self.project().clock = Some(permit.start_clock());
    }

    /// Enters the call's span, if it has one, for one poll of the call.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn enter(&self) -> impl Sized + '_ {
        self.clock.as_ref().map(|clock| clock.permit.span.enter())
    }

    /// Polls the call once through `poll` (which says whether it is ready) inside the
    /// call's span. Ready when it ended or the total timeout elapsed; a panic in the
    /// call is recorded as a failure and unwinds on. Behind `dyn`, so that
    /// this is compiled once rather than once per guarded method.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn poll_call(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        poll: &mut dyn FnMut(&mut Context<'_>) -> bool,
    ) -> Poll<Stop> {
        let polled = {
            let _entered = self.enter();
            catch_unwind(AssertUnwindSafe(|| poll(cx)))
        };
        match polled {
            Ok(true) => Poll::Ready(Stop::Ended(Instant::now())),
            Ok(false) => self.poll_expired(cx).map(Stop::TimedOut),
            Err(panic) => {
                // Recorded now; the permits stay here and go back when the `TimedCall` is
                // dropped, after the call's future.
                self.panicked();
                resume_unwind(panic);
            }
        }
    }

    /// Records a call that panicked as a failure, keeping the permits.
    #[cold]
    fn panicked(self: Pin<&mut Self>) {
        if let Some(clock) = self.project().clock {
            let now = Instant::now();
            clock
                .permit
                .report_end(true, Outcome::Failure, now - clock.start, now);
        }
    }

    /// Ready with the instant the total timeout elapsed; on the way, records the call as
    /// slow when its threshold passes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll_expired(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        let mut this = self.project();
        let clock = this
            .clock
            .as_mut()
            .expect("a timer runs until its call ends");
        let deadline = clock.deadline;
        if this.sleep.is_none() {
            let first = clock.slow_at.unwrap_or(deadline);
            this.sleep.set(Some(tokio::time::sleep_until(first)));
        }
        let mut sleep = this
            .sleep
            .as_pin_mut()
            .expect("the timer was set up just above");
        loop {
            match sleep.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                // Counted when the timer really fired, which may be later than it was
                // due (a busy runtime): the breaker then opens for its full duration.
                Poll::Ready(()) => {
                    if clock.slow_at.take().is_some() {
                        clock.permit.record_slow(Instant::now());
                        sleep.as_mut().reset(deadline);
                    } else {
                        return Poll::Ready(Instant::now());
                    }
                }
            }
        }
    }

    /// Records the call as timed out at `end`, keeping its permits until the timer is
    /// dropped; the guard's error.
    #[cold]
    pub(crate) fn time_out(self: Pin<&mut Self>, end: Instant) -> CircuitBreakerError {
        let clock = self
            .project()
            .clock
            .as_mut()
            .expect("a timer runs until its call ends");
        clock
            .permit
            .timed_out(end.saturating_duration_since(clock.start), end)
    }

    /// Takes the call's permit out of the finished timer, with how long the call ran
    /// until `end`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn stop(self: Pin<&mut Self>, end: Instant) -> (CallPermit<'g>, Duration) {
        let clock = self
            .project()
            .clock
            .take()
            .expect("`TimedCall` polled after it completed");
        (clock.permit, end.saturating_duration_since(clock.start))
    }
}

/// A call that finished or timed out, not yet recorded. Choose how to judge it, then
/// record it with [`elapsed_check`](Self::elapsed_check).
#[derive(Debug)]
#[must_use = "the outcome is only recorded by `elapsed_check`"]
pub struct Finished<'g, T, E> {
    permit: CallPermit<'g>,
    /// `None`: the total timeout elapsed first.
    result: Option<Result<T, E>>,
    elapsed: Duration,
    end: Instant,
    is_failure: fn(&E) -> bool,
    slow_as_error: bool,
}

impl<'g, T, E> Finished<'g, T, E> {
    /// The outcome of a call that ran for `elapsed` until `end`, under `permit`.
    /// Generic over the call's output alone, not over its future.
    #[inline]
    pub(crate) fn new(
        (permit, elapsed): (CallPermit<'g>, Duration),
        result: Option<Result<T, E>>,
        end: Instant,
    ) -> Self {
        Finished {
            permit,
            result,
            elapsed,
            end,
            is_failure: |_| true,
            slow_as_error: false,
        }
    }

    /// Counts an `Err` as a failure only when `is_failure` says so; other errors are the
    /// system answering correctly (a declined card), and count as successes.
    pub fn failure_if(mut self, is_failure: fn(&E) -> bool) -> Self {
        self.is_failure = is_failure;
        self
    }

    /// Returns a slow call as [`Cause::Slow`] instead of its value (the guide's literal
    /// behaviour). By default a slow call's value is returned and the slowness only
    /// counts against the breaker: a payment that went through is not reported failed.
    pub fn slow_as_error(mut self) -> Self {
        self.slow_as_error = true;
        self
    }

    /// How long the call ran (the total timeout, if it was cut off).
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Step 4: the elapsed check, then the outcome recorded. A call slower than
    /// `cb_slow_threshold` counts as a failure; a timed-out call is a failure and returns
    /// [`Cause::Timeout`].
    ///
    /// # Errors
    ///
    /// [`Cause::Timeout`] when `total_timeout` cut the call off, and [`Cause::Slow`] for a
    /// slow call under [`slow_as_error`](Self::slow_as_error). The call's own error is
    /// the inner `Err`.
    #[inline]
    pub fn elapsed_check(self) -> Result<Result<T, E>, CircuitBreakerError> {
        let Finished {
            mut permit,
            result,
            elapsed,
            end,
            is_failure,
            slow_as_error,
        } = self;
        let Some(result) = result else {
            return Err(permit.timed_out(elapsed, end));
        };
        let ended = match &result {
            Ok(_) => Ended::Ok,
            // A panicking classifier is a failure, like a panicking call, then unwinds.
            Err(err) => match catch_unwind(AssertUnwindSafe(|| is_failure(err))) {
                Ok(failed) => Ended::Err { failed },
                Err(panic) => {
                    permit.finish(true, Outcome::Failure, elapsed, end);
                    resume_unwind(panic);
                }
            },
        };
        permit.judge(ended, elapsed, end, slow_as_error)?;
        Ok(result)
    }
}

/// How a call that finished in time ended, as far as its judgement needs to know.
#[derive(Debug, Clone, Copy)]
enum Ended {
    Ok,
    /// `Err`; `failed` when the classifier counts it against the breaker.
    Err {
        failed: bool,
    },
}

// The parts of [`Finished::elapsed_check`] that do not depend on the call's types,
// compiled once (inlined as the timer's halves are).
impl CallPermit<'_> {
    /// Records a call the total timeout cut off: a failure, returned as
    /// [`Cause::Timeout`]. The permits stay held until `self` is dropped.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn timed_out(&mut self, elapsed: Duration, end: Instant) -> CircuitBreakerError {
        let guard = self.slot.guard;
        self.report_end(true, Outcome::Timeout, elapsed, end);
        error(
            guard,
            Cause::Timeout {
                timeout: guard.settings().total_timeout(),
            },
        )
    }

    /// The elapsed check of a call that finished in time and ended so, and its outcome
    /// recorded.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn judge(
        self,
        ended: Ended,
        elapsed: Duration,
        end: Instant,
        slow_as_error: bool,
    ) -> Result<(), CircuitBreakerError> {
        let guard = self.slot.guard;
        let failed = match ended {
            Ended::Ok => false,
            Ended::Err { failed } => failed,
        };
        let threshold = guard.settings().cb_slow_threshold();
        // Already counted as slow while running: report it as the breaker counted it,
        // even if the clock read at its end lands on the threshold itself.
        let slow = elapsed > threshold || matches!(self.breaker, Recording::Counted);
        let outcome = match (failed, slow) {
            (true, _) => Outcome::Failure,
            (false, true) => Outcome::Slow,
            (false, false) => Outcome::Success,
        };
        self.finish(failed || slow, outcome, elapsed, end);
        if slow && slow_as_error && matches!(ended, Ended::Ok) {
            return Err(error(guard, Cause::Slow { elapsed, threshold }));
        }
        Ok(())
    }
}

/// The guard's error of `cause`, naming its system.
fn error(guard: &Guard, cause: Cause) -> CircuitBreakerError {
    CircuitBreakerError::new(guard.breaker().name_arc(), cause)
}

#[cold]
pub(crate) fn report_rejection(guard: &Guard, cause: &Cause) {
    crate::log::rejected(guard.system(), cause);
    report(guard, Outcome::Rejected(*cause), None);
}

#[inline]
fn report(guard: &Guard, outcome: Outcome, elapsed: Option<Duration>) {
    let observers = guard.breaker().call_observers();
    if observers.is_empty() {
        return;
    }
    let event = CallEvent {
        system: guard.system(),
        outcome,
        elapsed,
    };
    for observer in observers {
        // Contained like a transition's observer: this may run in a drop, even while
        // unwinding, where a second panic would abort.
        if catch_unwind(AssertUnwindSafe(|| observer.on_call(&event))).is_err() {
            crate::log::observer_panicked(guard.system(), "on_call");
        }
    }
}
