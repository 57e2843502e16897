//! The bulkhead (R-RES-BH-1): at most `permits` calls of a system at once, a caller
//! waiting at most `bulkhead_wait` for a permit when it is full.
//!
//! Fair: first come, first served. A released permit goes to the oldest waiter, and a
//! caller arriving while others wait queues behind them, so nobody can overtake a waiter
//! and starve it until its `bulkhead_wait` runs out.
//!
//! Two places hold free permits, and one word decides which:
//! - `word` packs the free permits nobody waits for with the number of callers waiting
//!   (`waiting << 32 | free`). Taking a permit is one compare-and-swap that succeeds only
//!   while nobody waits; returning one is one compare-and-swap that puts it back only
//!   while nobody waits. So the uncontended call writes this one word twice, and takes no
//!   lock.
//! - tokio's `Semaphore` (fair) queues the waiters. A caller that finds no free permit
//!   counts itself waiting in the same word (one compare-and-swap that takes a permit
//!   instead if one was returned meanwhile), then waits in the semaphore's line; while
//!   anyone is counted waiting, every returned permit goes to the semaphore, which hands
//!   it to the oldest waiter.
//!
//! Why no caller overtakes a waiter and no permit is lost: the word keeps `free == 0`
//! whenever `waiting > 0` (a caller counts itself waiting only when no permit is free,
//! and a permit is put back as free only while nobody waits, both checked in the same
//! compare-and-swap), so while anyone waits, arrivals find nothing free and queue in the
//! semaphore, behind the waiters. A permit returned before a caller counts itself
//! waiting is free, and that caller's compare-and-swap takes it; one returned after goes
//! to the semaphore, where the caller finds it. A permit left in the semaphore with
//! nobody waiting (its waiter gave up as it came) is taken by the next caller that finds
//! the word empty: the semaphore hands out a permit only when none of its waiters is
//! owed it, so that does not overtake anyone either.
//!
//! Permits are held as counts, not as `SemaphorePermit`s (the call's permit is one
//! pointer to its guard): one taken from the semaphore is `forget`-ten, and goes back
//! through [`Bulkhead::release`] like any other.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crossbeam_utils::CachePadded;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The free permits nobody waits for: the low half of the word.
const FREE: u64 = (1 << 32) - 1;
/// One caller waiting: the high half of the word counts them.
const WAITER: u64 = 1 << 32;
/// The most permits a bulkhead has: what the word's free half holds, and the semaphore
/// takes.
const MAX_PERMITS: usize = if (FREE as usize) < Semaphore::MAX_PERMITS {
    FREE as usize
} else {
    Semaphore::MAX_PERMITS
};

/// One system's bulkhead.
#[derive(Debug)]
pub(crate) struct Bulkhead {
    /// `waiting << 32 | free`; on a cache line of its own, the only one an uncontended
    /// call writes.
    word: CachePadded<AtomicU64>,
    /// The waiters' line, and the permits handed to it while anyone waits.
    semaphore: Semaphore,
    /// The size; changed only by [`resize`](Self::resize).
    permits: AtomicUsize,
    /// Permits to take back as they are released: a shrink below the permits in use
    /// revokes none, it keeps the ones returned until the debt is paid.
    debt: AtomicUsize,
}

/// Counts a caller waiting until dropped: its wait ended, with a permit or without (or
/// the wait was cancelled).
struct Waiting<'a>(&'a AtomicU64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(WAITER, Ordering::AcqRel);
    }
}

impl Bulkhead {
    /// A bulkhead of `permits` permits (at least 1).
    pub(crate) fn new(permits: usize) -> Self {
        let permits = permits.clamp(1, MAX_PERMITS);
        Bulkhead {
            word: CachePadded::new(AtomicU64::new(permits as u64)),
            semaphore: Semaphore::new(0),
            permits: AtomicUsize::new(permits),
            debt: AtomicUsize::new(0),
        }
    }

    /// Takes a permit if one is free and nobody waits, without waiting. The caller must
    /// [`release`](Self::release) it.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        let word = self.word.load(Ordering::Relaxed);
        // Nobody waiting and a permit free: the word is 1..=FREE.
        if word.wrapping_sub(1) < FREE
            && self
                .word
                .compare_exchange(word, word - 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return true;
        }
        self.try_acquire_slow()
    }

    /// [`try_acquire`](Self::try_acquire) when the first look failed: the word again
    /// (another caller may have moved it), then a permit left in the semaphore.
    #[cold]
    fn try_acquire_slow(&self) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        while word.wrapping_sub(1) < FREE {
            match self.word.compare_exchange_weak(
                word,
                word - 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
        // tokio's `try_acquire` fails while any waiter is owed a permit: fair.
        match self.semaphore.try_acquire() {
            Ok(permit) => {
                permit.forget();
                true
            }
            Err(_) => false,
        }
    }

    /// Takes a permit, waiting in line at most `wait` for one; `false` if none came in
    /// time. A `wait` of zero never waits. Cancel-safe: dropped while waiting, it holds
    /// nothing and leaves the line (tokio's semaphore hands a permit it was being given
    /// on to the next waiter).
    pub(crate) async fn acquire(&self, wait: Duration) -> bool {
        if self.try_acquire() {
            return true;
        }
        if wait.is_zero() {
            return false;
        }
        let deadline = Instant::now() + wait;
        let Some(_waiting) = self.count_waiting() else {
            return true; // a permit came back meanwhile
        };
        match tokio::time::timeout_at(deadline, self.semaphore.acquire()).await {
            Ok(Ok(permit)) => {
                permit.forget();
                true
            }
            // Timed out, or closed (never: the bulkhead does not close its semaphore).
            Ok(Err(_)) | Err(_) => false,
        }
    }

    /// Counts the caller waiting, from now until the returned value is dropped; `None`
    /// when it took a permit instead, one returned free meanwhile.
    fn count_waiting(&self) -> Option<Waiting<'_>> {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            let (next, took) = if word.wrapping_sub(1) < FREE {
                (word - 1, true)
            } else {
                (word + WAITER, false)
            };
            match self
                .word
                .compare_exchange_weak(word, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) if took => return None,
                Ok(_) => return Some(Waiting(&self.word)),
                Err(now) => word = now,
            }
        }
    }

    /// Returns a permit: free again if nobody waits, else to the oldest waiter.
    #[inline]
    pub(crate) fn release(&self) {
        // One load on the usual path: no debt.
        if self.debt.load(Ordering::Acquire) != 0 && self.pay_one() {
            return;
        }
        let word = self.word.load(Ordering::Relaxed);
        if word < FREE
            && self
                .word
                .compare_exchange(word, word + 1, Ordering::Release, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
        self.release_slow();
    }

    /// [`release`](Self::release) when the first try failed: someone waits (the permit
    /// goes to the semaphore's line), or the word moved under it.
    #[cold]
    fn release_slow(&self) {
        self.give(1);
    }

    /// Makes `n` permits free if nobody waits (and they fit the word), else hands them
    /// to the semaphore's line.
    fn give(&self, n: usize) {
        let added = self
            .word
            .fetch_update(Ordering::Release, Ordering::Relaxed, |word| {
                let free = (word < FREE).then_some(word + n as u64)?;
                (free <= FREE).then_some(free)
            });
        if added.is_err() {
            self.semaphore.add_permits(n);
        }
    }

    /// Keeps a released permit to pay the shrink's debt; `false` if none is owed.
    #[cold]
    fn pay_one(&self) -> bool {
        self.debt
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| d.checked_sub(1))
            .is_ok()
    }

    /// Makes the bulkhead `permits` permits (at least 1) without revoking a permit in
    /// use: growing first cancels any debt, then adds permits (to the waiters first);
    /// shrinking forgets free permits and owes the rest, taken back as calls end.
    /// Callers serialise resizes (a reload holds the registry's reload lock).
    pub(crate) fn resize(&self, permits: usize) {
        let permits = permits.clamp(1, MAX_PERMITS);
        let old = self.permits.swap(permits, Ordering::AcqRel);
        if permits > old {
            let mut grow = permits - old;
            let paid = self
                .debt
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                    Some(d.saturating_sub(grow))
                })
                .unwrap_or(0);
            grow -= paid.min(grow);
            if grow > 0 {
                self.give(grow);
            }
        } else if permits < old {
            let shrink = old - permits;
            let mut forgotten = 0;
            let _ = self
                .word
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                    forgotten = (word & FREE).min(shrink as u64);
                    Some(word - forgotten)
                });
            // `forgotten <= shrink`, a `usize`.
            let mut forgotten = forgotten as usize;
            forgotten += self.semaphore.forget_permits(shrink - forgotten);
            if forgotten < shrink {
                self.debt.fetch_add(shrink - forgotten, Ordering::AcqRel);
            }
        }
    }

    /// Permits held right now.
    #[inline]
    pub(crate) fn in_use(&self) -> usize {
        // Permits owed are still held by calls.
        let free = (self.word.load(Ordering::Acquire) & FREE) as usize;
        (self.permits.load(Ordering::Acquire) + self.debt.load(Ordering::Acquire))
            .saturating_sub(free + self.semaphore.available_permits())
    }

    /// The number of permits.
    #[inline]
    pub(crate) fn permits(&self) -> usize {
        self.permits.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod resize_tests {
    use super::Bulkhead;

    #[test]
    fn a_shrink_below_the_permits_in_use_revokes_none_and_takes_them_back_as_calls_end() {
        let bulkhead = Bulkhead::new(4);
        for _ in 0..3 {
            assert!(bulkhead.try_acquire());
        }
        bulkhead.resize(1);
        assert_eq!(bulkhead.permits(), 1);
        assert_eq!(
            bulkhead.in_use(),
            3,
            "the three calls still hold their permits"
        );
        assert!(!bulkhead.try_acquire(), "full: three in use of one");
        bulkhead.release();
        bulkhead.release();
        assert_eq!(bulkhead.in_use(), 1);
        assert!(!bulkhead.try_acquire(), "one in use of one");
        bulkhead.release();
        assert_eq!(bulkhead.in_use(), 0);
        assert!(bulkhead.try_acquire());
        assert!(!bulkhead.try_acquire());
    }

    #[test]
    fn a_grow_after_a_shrink_cancels_the_debt_first() {
        let bulkhead = Bulkhead::new(4);
        for _ in 0..4 {
            assert!(bulkhead.try_acquire());
        }
        bulkhead.resize(2); // owes 2
        bulkhead.resize(5); // pays the 2, adds 1
        assert_eq!(bulkhead.in_use(), 4);
        assert!(bulkhead.try_acquire());
        assert!(!bulkhead.try_acquire());
        for _ in 0..5 {
            bulkhead.release();
        }
        assert_eq!(bulkhead.in_use(), 0);
        let mut taken = 0;
        while bulkhead.try_acquire() {
            taken += 1;
        }
        assert_eq!(taken, 5);
    }
}

#[cfg(test)]
mod line_tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;

    use super::Bulkhead;

    const WAIT: Duration = Duration::from_secs(1);

    /// Polls `future` once, with a waker that does nothing.
    fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_permit_released_while_someone_waits_goes_to_the_waiter_not_a_newcomer() {
        let bulkhead = Bulkhead::new(1);
        assert!(bulkhead.try_acquire());
        let mut waiter = pin!(bulkhead.acquire(WAIT));
        assert!(poll_once(waiter.as_mut()).is_pending(), "full: it waits");
        bulkhead.release();
        assert!(
            !bulkhead.try_acquire(),
            "a newcomer does not take the permit the waiter is owed"
        );
        assert_eq!(poll_once(waiter.as_mut()), Poll::Ready(true));
        assert_eq!(bulkhead.in_use(), 1);
        bulkhead.release();
        assert_eq!(bulkhead.in_use(), 0);
        assert!(bulkhead.try_acquire(), "nobody waits: free again");
    }

    #[tokio::test(start_paused = true)]
    async fn a_permit_left_in_the_line_by_a_cancelled_waiter_is_taken_by_the_next_caller() {
        let bulkhead = Bulkhead::new(1);
        assert!(bulkhead.try_acquire());
        {
            let mut waiter = pin!(bulkhead.acquire(WAIT));
            assert!(poll_once(waiter.as_mut()).is_pending());
            bulkhead.release(); // to the waiter, which is dropped before it takes it
        }
        assert_eq!(bulkhead.in_use(), 0, "the permit is back, in the line");
        assert!(bulkhead.try_acquire(), "found where the waiter left it");
        assert!(!bulkhead.try_acquire());
        bulkhead.release();
        assert!(bulkhead.try_acquire(), "and free again once returned");
    }

    #[tokio::test(start_paused = true)]
    async fn waiters_are_served_in_arrival_order_and_a_grow_serves_them_first() {
        let bulkhead = Bulkhead::new(1);
        assert!(bulkhead.try_acquire());
        let mut first = pin!(bulkhead.acquire(WAIT));
        let mut second = pin!(bulkhead.acquire(WAIT));
        assert!(poll_once(first.as_mut()).is_pending());
        assert!(poll_once(second.as_mut()).is_pending());
        bulkhead.resize(2);
        assert!(
            !bulkhead.try_acquire(),
            "the new permit is owed to a waiter"
        );
        assert!(
            poll_once(second.as_mut()).is_pending(),
            "not before the first"
        );
        assert_eq!(poll_once(first.as_mut()), Poll::Ready(true));
        bulkhead.release();
        assert_eq!(poll_once(second.as_mut()), Poll::Ready(true));
        assert_eq!(bulkhead.in_use(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_caller_whose_wait_runs_out_holds_nothing_and_stops_counting_as_waiting() {
        let bulkhead = Bulkhead::new(1);
        assert!(bulkhead.try_acquire());
        assert!(!bulkhead.acquire(WAIT).await);
        bulkhead.release();
        assert!(
            bulkhead.try_acquire(),
            "nobody waits any more: the permit came back free"
        );
    }
}
