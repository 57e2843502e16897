//! What a call holds and gives back: a bulkhead [`Slot`], then the [`RunningCall`] that
//! adds the breaker's ticket, the call's span and clock; how a slot is taken; and how a
//! running call ends (its elapsed check, the verdict counted and reported).
//!
//! Both own a clone of the [`Guard`], so a call borrows nothing and its future is
//! `'static` whenever the call's own future is. Dropping either at any point gives
//! everything taken so far back; nothing is counted unless the call had already run
//! past its slow threshold, which counted it as slow then.

use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::breaker::Ticket;
use crate::error::{Cause, CircuitBreakerError};
use crate::guard::Guard;
use crate::hooks::{self, CallSpan};
use crate::observer::{self, CallEvent, Outcome};
use crate::saturation::Episode;
use crate::verdict::Verdict;

/// A permit of its guard's bulkhead, returned when dropped. With metrics, taking and
/// returning it moves the in-use gauge. One pointer: the guard reaches everything.
#[derive(Debug)]
pub(crate) struct Slot {
    guard: Guard,
}

impl Slot {
    /// Wraps a permit just taken from `guard`'s bulkhead.
    #[inline]
    fn new(guard: Guard) -> Self {
        // Owned first: a panicking metrics recorder then returns the permit as it unwinds.
        let slot = Slot { guard };
        slot.guard.metrics().bulkhead_taken();
        slot
    }

    /// A slot if one is free now: the uncontended path, one compare-and-swap. The guard
    /// comes back when none is.
    #[inline]
    pub(super) fn try_take(guard: Guard) -> Result<Self, Guard> {
        if guard.bulkhead().try_acquire() {
            Ok(Slot::new(guard))
        } else {
            Err(guard)
        }
    }

    /// The bulkhead was full: waits at most `bulkhead_wait` for a slot, or rejects
    /// (see [`GuardedCall`](super::GuardedCall) for when a wait that ends empty-handed
    /// counts).
    #[cold]
    pub(super) async fn wait(guard: Guard) -> Result<Self, CircuitBreakerError> {
        let breaker = guard.breaker();
        if let Some(error) = breaker.refusal() {
            rejected(&guard, error.cause());
            return Err(error);
        }
        let generation = breaker.closed_generation();
        let episode = guard.slow_holders().slow_held();
        let wait = guard.bulkhead_wait();
        if !wait.is_zero() && guard.bulkhead().acquire(wait).await {
            return Ok(Slot::new(guard));
        }
        if let (Some(generation), Some(episode)) = (generation, episode) {
            kept_out(&guard, generation, episode);
        }
        let cause = Cause::BulkheadFull {
            permits: guard.bulkhead().permits(),
            waited: wait,
        };
        rejected(&guard, &cause);
        Err(CircuitBreakerError::new(guard.breaker().name_arc(), cause))
    }
}

impl Drop for Slot {
    #[inline]
    fn drop(&mut self) {
        self.guard.bulkhead().release();
        self.guard.metrics().bulkhead_returned();
    }
}

/// A caller's wait that began while closed in `generation`, with some permit held by a
/// slow call in `episode`, ended without a permit: a failure for the breaker if the
/// breaker is still closed in `generation` and every permit is now held by a slow call
/// of `episode` (see `saturation`).
#[cold]
fn kept_out(guard: &Guard, generation: u64, episode: Episode) {
    let breaker = guard.breaker();
    if breaker.closed_generation() != Some(generation)
        || !guard
            .slow_holders()
            .saturated_since(guard.bulkhead().permits(), episode)
    {
        return;
    }
    breaker.count_closed_failure(generation);
    guard.metrics().recorded(breaker);
}

/// A call the guard refused: logged, and reported to the observers.
#[cold]
fn rejected(guard: &Guard, cause: &Cause) {
    hooks::rejected(guard.system(), cause);
    report(guard, Outcome::Rejected(*cause), || None);
}

/// A call's outcome, to every observer that wants calls; `elapsed` is only worked out
/// when one does.
#[inline]
fn report(guard: &Guard, outcome: Outcome, elapsed: impl FnOnce() -> Option<Duration>) {
    let observers = guard.breaker().call_observers();
    if observers.is_empty() {
        return;
    }
    let event = CallEvent {
        system: guard.system(),
        outcome,
        elapsed: elapsed(),
    };
    // This may run in a drop, even while unwinding, where a second panic would abort:
    // `notify` contains each observer's.
    observer::notify(observers, guard.system(), "on_call", |observer| {
        observer.on_call(&event);
    });
}

/// A call its guard admitted, still running: the bulkhead slot, the breaker's ticket,
/// the call's span and its clock (started when it was admitted). A
/// [`GuardedCall`](super::GuardedCall) holds one while its call runs and hands it to its
/// [`Judge`](super::Judge) when the call's future is ready, which reads the answer inside
/// [`poll_call`](Self::poll_call) (the span entered, a panic counted as a failure) and
/// [`finish`](Self::finish)es it with its verdict.
///
/// Dropped unfinished, the call counts as cancelled: nothing is counted unless it had
/// already been counted slow, and the breaker's ticket (a trial slot) goes back before
/// the bulkhead slot.
///
/// The gRPC layer's judge hands it on, unfinished, to the response body, whose trailers
/// give the verdict; the body keeps the total timeout running with a hidden method. That
/// hand-over is no promise to other code (one user needs it).
#[derive(Debug)]
#[must_use = "a running call dropped unfinished counts as cancelled"]
pub struct RunningCall {
    // Where the outcome stands with the breaker: the ticket until the outcome is
    // counted (given back by `Drop` below, before the fields drop and the bulkhead slot
    // with them); `slow_counted` while a call counted slow still runs. Neither: ended
    // and reported to the observers.
    ticket: Option<Ticket>,
    slow_counted: bool,
    /// `guarded_call{system, outcome}`; one pointer, null unless a subscriber wants it.
    span: CallSpan,
    start: Instant,
    // After how long a still-running call becomes slow; `None` once that has been
    // counted, or if the total timeout comes first. Instants are worked out from
    // `start` only if the call does not end on its first poll.
    slow_after: Option<Duration>,
    timeout: Duration,
    /// The bulkhead slot, and the guard.
    slot: Slot,
}

// The steps below are not generic: compiled once, here. Inlined into the generic shell in
// optimised builds (`inline(always)`: the hot path stays one function); debug builds call
// them in this crate, as compiled here (an `inline` hint would copy them into every crate
// with a guarded method, at opt-level 0 for nothing). The steps in `call.rs` and `call/judge.rs`
// follow the same rule.
impl RunningCall {
    /// The breaker's ticket for the call `slot` lets in, and its clock started: the
    /// start instant read here serves both the deadline and the elapsed check. Rejected
    /// at once while open, and while half-open beyond the trial calls; the slot is
    /// returned then.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn start(slot: Slot) -> Result<Self, CircuitBreakerError> {
        let guard = &slot.guard;
        let ticket = match guard.breaker().acquire_ticket() {
            Ok(ticket) => ticket,
            Err(error) => {
                rejected(guard, error.cause());
                return Err(error);
            }
        };
        let span = CallSpan::new(guard.system());
        let start = Instant::now();
        let timeout = guard.total_timeout();
        // A call still running when this fires runs longer than the threshold: one that
        // ends exactly then is polled (and finished) before the timer is.
        let slow_after = guard.slow_threshold();
        Ok(RunningCall {
            ticket: Some(ticket),
            slow_counted: false,
            span,
            start,
            slow_after: (slow_after < timeout).then_some(slow_after),
            timeout,
            slot,
        })
    }

    /// Runs `poll` (one poll of the call, or a judge reading its answer) inside the
    /// call's `guarded_call` span. A panic in it is counted as a failure and unwinds on;
    /// the permits go back as the running call drops.
    #[inline]
    pub fn poll_call<T>(&mut self, poll: impl FnOnce() -> T) -> T {
        let polled = {
            let _entered = self.span.enter();
            catch_unwind(AssertUnwindSafe(poll))
        };
        match polled {
            Ok(polled) => polled,
            Err(panic) => {
                self.panicked();
                resume_unwind(panic)
            }
        }
    }

    /// Ready with the guard's [`Cause::Timeout`] once `total_timeout` has elapsed, the
    /// call counted as timed out (a failure); on the way, counts the call as slow when
    /// `cb_slow_threshold` passes while it runs. Both count from the instant `timer`
    /// actually fired, so a late timer never shortens the breaker's open period. `timer`
    /// is set up on the first poll (a call that ends on its first poll never arms it)
    /// and owned, pinned, by whoever polls the call, so the running call itself can
    /// move. Poll it whenever the call's own poll is pending; after it is ready, drop
    /// the call's future, then this. For [`GuardedCall`](super::GuardedCall) and the
    /// gRPC body it hands the running call to; no promise to other code.
    #[doc(hidden)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn poll_expired(
        &mut self,
        mut timer: Pin<&mut Option<Sleep>>,
        cx: &mut Context<'_>,
    ) -> Poll<CircuitBreakerError> {
        if timer.is_none() {
            timer.set(Some(tokio::time::sleep_until(self.next_alarm())));
        }
        let Some(mut sleep) = timer.as_pin_mut() else {
            unreachable!("the timer was set up just above")
        };
        loop {
            ready!(sleep.as_mut().poll(cx));
            let now = Instant::now();
            match self.alarm(now) {
                Some(next) => sleep.as_mut().reset(next),
                None => return Poll::Ready(self.timed_out(now)),
            }
        }
    }

    /// The call ended now, judged `verdict`: the elapsed check counts a call slower
    /// than `cb_slow_threshold` as a failure too, the outcome is counted and reported,
    /// and the permits go back. A call already counted at its end (timed out, panicked)
    /// is not counted again.
    ///
    /// # Errors
    ///
    /// [`Cause::Slow`] when the call was slow and its verdict a success: for a judge
    /// that returns slow calls as errors (`slow_as_error`); others ignore it.
    #[inline]
    pub fn finish(self, verdict: Verdict) -> Result<(), CircuitBreakerError> {
        if self.ticket.is_none() && !self.slow_counted {
            return Ok(());
        }
        self.end(verdict, Instant::now())
    }

    /// [`finish`](Self::finish) at `end`, for a call not counted at its end yet.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn end(mut self, verdict: Verdict, end: Instant) -> Result<(), CircuitBreakerError> {
        let threshold = self.guard().slow_threshold();
        // Already counted as slow while running: report it as the breaker counted it,
        // even if the clock read at its end lands on the threshold itself.
        let slow = self.ran_longer(end, threshold) || self.slow_counted;
        let failed = verdict.is_failure();
        let outcome = match (failed, slow) {
            (true, _) => Outcome::Failure,
            (false, true) => Outcome::Slow,
            (false, false) => Outcome::Success,
        };
        let slow_success = (slow && !failed).then(|| {
            CircuitBreakerError::new(
                self.guard().breaker().name_arc(),
                Cause::Slow {
                    elapsed: self.elapsed(end),
                    threshold,
                },
            )
        });
        // A slow success counts as a failure (without a hint: the upstream gave none).
        let verdict = if slow {
            Verdict::new(true).retry_after(verdict.retry_hint())
        } else {
            verdict
        };
        self.report_end(verdict, outcome, end);
        slow_success.map_or(Ok(()), Err)
        // The permits go back as `self` drops.
    }

    #[inline]
    fn guard(&self) -> &Guard {
        &self.slot.guard
    }

    /// When the timer should fire next: at the slow threshold, unless the call was
    /// counted slow already, then at the deadline.
    #[inline]
    fn next_alarm(&self) -> Instant {
        self.start + self.slow_after.unwrap_or(self.timeout)
    }

    /// How long the call ran until `end`.
    #[inline]
    fn elapsed(&self, end: Instant) -> Duration {
        end.saturating_duration_since(self.start)
    }

    /// Whether the call ran longer than `threshold` until `end`: `elapsed(end) >
    /// threshold`, in one addition rather than a subtraction.
    #[inline]
    fn ran_longer(&self, end: Instant, threshold: Duration) -> bool {
        self.start
            .checked_add(threshold)
            .is_some_and(|slow_at| end > slow_at)
    }

    /// The timer fired at `now`: counts a still-running call as slow if its threshold
    /// was due, and says when to fire next; `None` when the total timeout elapsed.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn alarm(&mut self, now: Instant) -> Option<Instant> {
        if self.slow_after.take().is_some() {
            self.count_slow(now);
            Some(self.start + self.timeout)
        } else {
            None
        }
    }

    /// The call is still running past its slow threshold: count it as a failure now,
    /// so a system that hangs trips the breaker at the threshold, not at the timeout.
    /// Its end is still reported when it comes; it is not counted again. Counted when
    /// the timer really fired, which may be later than it was due (a busy runtime): the
    /// breaker then opens for its full duration.
    #[cold]
    fn count_slow(&mut self, now: Instant) {
        if let Some(ticket) = self.ticket.take() {
            self.slow_counted = true;
            let guard = &self.slot.guard;
            guard.slow_holders().counted_slow();
            guard.breaker().count_at(ticket, Verdict::FAILURE, now);
        }
    }

    /// Counts the outcome, samples a success for an adaptive bulkhead and reports the
    /// call to the observers, keeping the permits:
    /// they go back when `self` is dropped (a panicking or timed-out call's, once its
    /// future is dropped).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn report_end(&mut self, verdict: Verdict, outcome: Outcome, end: Instant) {
        let guard = &self.slot.guard;
        if let Some(ticket) = self.ticket.take() {
            guard.breaker().count_at(ticket, verdict, end);
        } else if std::mem::take(&mut self.slow_counted) {
            guard.slow_holders().ended();
        }
        if guard.ends_watched() {
            self.watched_end(outcome, end);
        }
        self.span.record(outcome.as_str());
        guard.metrics().recorded(guard.breaker());
    }

    /// The end of a call whose guard [watches ends](Guard::ends_watched): a success
    /// (slow or not) is a sample for an adaptive bulkhead, taken before the permit goes
    /// back; then the observers that want calls hear of it. Out of line, so that a
    /// fixed bulkhead without call observers pays one test for both.
    #[cold]
    #[inline(never)]
    fn watched_end(&self, outcome: Outcome, end: Instant) {
        let guard = &self.slot.guard;
        if matches!(outcome, Outcome::Success | Outcome::Slow) {
            guard.succeeded(self.start, end);
        }
        report(guard, outcome, || Some(self.elapsed(end)));
    }

    /// Counts a call the total timeout cut off at `end`: a failure, returned as
    /// [`Cause::Timeout`]. The permits stay held until `self` is dropped.
    #[cold]
    fn timed_out(&mut self, end: Instant) -> CircuitBreakerError {
        self.report_end(Verdict::FAILURE, Outcome::Timeout, end);
        let guard = &self.slot.guard;
        CircuitBreakerError::new(
            guard.breaker().name_arc(),
            Cause::Timeout {
                timeout: guard.total_timeout(),
            },
        )
    }

    /// Counts a call that panicked (or whose judge panicked) as a failure, keeping the
    /// permits.
    #[cold]
    fn panicked(&mut self) {
        let now = Instant::now();
        self.report_end(Verdict::FAILURE, Outcome::Failure, now);
    }
}

impl Drop for RunningCall {
    #[inline]
    fn drop(&mut self) {
        // Judged and reported: only the fields drop (the usual path stays small).
        if self.ticket.is_some() || self.slow_counted {
            self.cancelled();
        }
        // The fields drop after this, in order: the span, and only then the bulkhead
        // slot.
    }
}

impl RunningCall {
    /// Dropped before it was reported (cancelled, or counted slow and then cancelled):
    /// the breaker's ticket back, the end reported.
    #[cold]
    #[inline(never)]
    fn cancelled(&mut self) {
        let guard = &self.slot.guard;
        if let Some(ticket) = self.ticket.take() {
            // A trial slot back before the bulkhead lets the next caller in.
            guard.breaker().cancel(ticket);
        } else if std::mem::take(&mut self.slow_counted) {
            guard.slow_holders().ended();
        } else {
            return;
        }
        self.span.record(Outcome::Cancelled.as_str());
        report(guard, Outcome::Cancelled, || None);
    }
}
