//! What a running call holds and gives back: a bulkhead [`Slot`], then the [`Permit`]
//! that adds the breaker's permission and the call's clock; and how a slot is taken.
//!
//! Both own a clone of the [`Guard`], so a call borrows nothing and its future is
//! `'static` whenever the call's own future is. Dropping either at any point gives
//! everything taken so far back; nothing is recorded unless the call had already run
//! past its slow threshold, which counted it as slow then.

use std::mem;
use std::time::Duration;

use tokio::time::Instant;

use crate::breaker::Ticket;
use crate::error::{Cause, CircuitBreakerError};
use crate::guard::Guard;
use crate::hooks::{self, CallSpan};
use crate::observer::{self, CallEvent, Outcome};
use crate::saturation::Episode;

/// A permit of its guard's bulkhead, returned when dropped. With metrics, taking and
/// returning it moves the in-use gauge. One pointer: the guard reaches everything.
#[derive(Debug)]
pub(super) struct Slot {
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
    /// (see [`Guard::call_with`] for when a wait that ends empty-handed counts).
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
            permits: guard.bulkhead_permits(),
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
            .saturated_since(guard.bulkhead_permits(), episode)
    {
        return;
    }
    breaker.record_closed_failure(generation);
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

/// Everything a running call holds: the breaker's permission, its span and clock, and
/// the bulkhead slot. Dropped before the call was judged (cancelled, panicked, timed
/// out), it reports the call cancelled unless it was reported already, and gives the
/// breaker's permission back before the bulkhead slot.
#[derive(Debug)]
pub(super) struct Permit {
    // Where the outcome stands with the breaker: given back (a trial slot) by `Drop`
    // below, before the fields drop and the bulkhead slot with them.
    breaker: Recording,
    /// `guarded_call{system, outcome}`; one pointer, null unless a subscriber wants it.
    span: CallSpan,
    start: Instant,
    // After how long a still-running call becomes slow; `None` once that has been
    // recorded, or if the total timeout comes first. Instants are worked out from
    // `start` only if the call does not end on its first poll.
    slow_after: Option<Duration>,
    timeout: Duration,
    /// The bulkhead permit, and the guard.
    slot: Slot,
}

/// Where a call's outcome stands with the breaker.
#[derive(Debug)]
enum Recording {
    /// Not recorded yet: the breaker's ticket, cancelled if the permit is dropped.
    Pending(Ticket),
    /// Recorded as slow while still running; its end is still to be reported.
    Counted,
    /// Ended and reported to the observers.
    Reported,
}

// The non-generic halves below are inlined into the generic shell in optimised builds
// (`inline(always)`: the hot path stays one function). Debug builds call them in this
// crate, as compiled here: an `inline` hint there would copy them into every crate with a
// guarded method, at opt-level 0 for nothing.
impl Permit {
    /// The breaker's permission for the call `slot` lets in, and its clock started: the
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
        Ok(Permit {
            breaker: Recording::Pending(ticket),
            span,
            start,
            slow_after: (slow_after < timeout).then_some(slow_after),
            timeout,
            slot,
        })
    }

    #[inline]
    pub(super) fn guard(&self) -> &Guard {
        &self.slot.guard
    }

    /// The call's span, to enter for one poll of the call.
    #[inline]
    pub(super) fn span(&self) -> &CallSpan {
        &self.span
    }

    /// When the timer should fire next: at the slow threshold, unless the call was
    /// counted slow already, then at the deadline.
    #[inline]
    pub(super) fn next_alarm(&self) -> Instant {
        self.start + self.slow_after.unwrap_or(self.timeout)
    }

    /// When `total_timeout` ends the call.
    #[inline]
    pub(super) fn deadline(&self) -> Instant {
        self.start + self.timeout
    }

    /// Whether the call's end was recorded and reported already (timed out, panicked).
    #[inline]
    pub(super) fn reported(&self) -> bool {
        matches!(self.breaker, Recording::Reported)
    }

    /// How long the call ran until `end`.
    #[inline]
    pub(super) fn elapsed(&self, end: Instant) -> Duration {
        end.saturating_duration_since(self.start)
    }

    /// Whether the call ran longer than `threshold` until `end`: `elapsed(end) >
    /// threshold`, in one addition rather than a subtraction.
    #[inline]
    pub(super) fn ran_longer(&self, end: Instant, threshold: Duration) -> bool {
        self.start
            .checked_add(threshold)
            .is_some_and(|slow_at| end > slow_at)
    }

    /// The timer fired at `now`: counts a still-running call as slow if its threshold
    /// was due, and says when to fire next; `None` when the total timeout elapsed.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn alarm(&mut self, now: Instant) -> Option<Instant> {
        if self.slow_after.take().is_some() {
            self.record_slow(now);
            Some(self.start + self.timeout)
        } else {
            None
        }
    }

    /// The call is still running past its slow threshold: count it as a failure now,
    /// so a system that hangs trips the breaker at the threshold, not at the timeout.
    /// Its end is still reported when it comes; it is not recorded again. Counted when
    /// the timer really fired, which may be later than it was due (a busy runtime): the
    /// breaker then opens for its full duration.
    #[cold]
    fn record_slow(&mut self, now: Instant) {
        if let Recording::Pending(ticket) = mem::replace(&mut self.breaker, Recording::Counted) {
            let guard = &self.slot.guard;
            guard.slow_holders().counted_slow();
            guard.breaker().record_at(ticket, true, now);
        }
    }

    /// Whether the call was already counted slow while it ran.
    #[inline]
    pub(super) fn counted_slow(&self) -> bool {
        matches!(self.breaker, Recording::Counted)
    }

    /// Records the outcome and reports the call to the observers, keeping the permits:
    /// they go back when `self` is dropped (a panicking or timed-out call's, once its
    /// future is dropped).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn report_end(&mut self, failed: bool, outcome: Outcome, end: Instant) {
        self.report_end_hinted(failed, outcome, end, None);
    }

    /// [`report_end`](Self::report_end), with the upstream's retry hint a failure
    /// carries (see [`BreakerPermit::failure_with_retry_after`](crate::BreakerPermit::failure_with_retry_after)).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn report_end_hinted(
        &mut self,
        failed: bool,
        outcome: Outcome,
        end: Instant,
        retry_after: Option<Duration>,
    ) {
        let guard = &self.slot.guard;
        match mem::replace(&mut self.breaker, Recording::Reported) {
            Recording::Pending(ticket) => match retry_after.filter(|_| failed) {
                None => guard.breaker().record_at(ticket, failed, end),
                Some(hint) => guard.breaker().record_hinted_at(ticket, hint, end),
            },
            Recording::Counted => guard.slow_holders().ended(),
            Recording::Reported => {}
        }
        self.span.record(outcome.as_str());
        report(guard, outcome, || Some(self.elapsed(end)));
        guard.metrics().recorded(guard.breaker());
    }

    /// Records a call the total timeout cut off at `end`: a failure, returned as
    /// [`Cause::Timeout`]. The permits stay held until `self` is dropped.
    #[cold]
    pub(super) fn timed_out(&mut self, end: Instant) -> CircuitBreakerError {
        self.report_end(true, Outcome::Timeout, end);
        let guard = &self.slot.guard;
        CircuitBreakerError::new(
            guard.breaker().name_arc(),
            Cause::Timeout {
                timeout: guard.total_timeout(),
            },
        )
    }

    /// Records a call that panicked as a failure, keeping the permits.
    #[cold]
    pub(super) fn panicked(&mut self) {
        let now = Instant::now();
        self.report_end(true, Outcome::Failure, now);
    }
}

impl Drop for Permit {
    #[inline]
    fn drop(&mut self) {
        // Judged and reported: only the fields drop (the usual path stays small).
        if !matches!(self.breaker, Recording::Reported) {
            self.cancelled();
        }
        // The fields drop after this, in order: the span, and only then the bulkhead
        // slot.
    }
}

impl Permit {
    /// Dropped before it was reported (cancelled, or counted slow and then cancelled):
    /// the breaker's ticket back, the end reported.
    #[cold]
    #[inline(never)]
    fn cancelled(&mut self) {
        let guard = &self.slot.guard;
        match mem::replace(&mut self.breaker, Recording::Reported) {
            Recording::Reported => return,
            // A trial slot back before the bulkhead lets the next caller in.
            Recording::Pending(ticket) => guard.breaker().cancel(ticket),
            Recording::Counted => guard.slow_holders().ended(),
        }
        self.span.record(Outcome::Cancelled.as_str());
        report(guard, Outcome::Cancelled, || None);
    }
}
