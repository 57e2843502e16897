//! The bulkhead (R-RES-BH-1): at most `permits` calls of a system at once, a caller
//! waiting at most `bulkhead_wait` for a permit when it is full.
//!
//! A `tokio::sync::Semaphore`, so the bulkhead is fair: first come, first served. A
//! released permit goes to the oldest waiter, and a caller arriving while others wait
//! queues behind them (the semaphore's `try_acquire` fails while permits are owed to
//! waiters), so nobody can overtake a waiter and starve it until its `bulkhead_wait`
//! runs out. The uncontended path is `try_acquire`, one compare-and-swap.
//!
//! A permit is held as a count, not as a `SemaphorePermit` (the call's permit is one
//! pointer to its guard): taking one `forget`s the semaphore's guard, returning it is
//! `add_permits(1)`, which is exactly what dropping that guard does.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

/// One system's bulkhead.
#[derive(Debug)]
pub(crate) struct Bulkhead {
    semaphore: Semaphore,
    /// The size; changed only by [`resize`](Self::resize).
    permits: AtomicUsize,
    /// Permits to take back as they are released: a shrink below the permits in use
    /// revokes none, it keeps the ones returned until the debt is paid.
    debt: AtomicUsize,
}

impl Bulkhead {
    /// A bulkhead of `permits` permits (at least 1).
    pub(crate) fn new(permits: usize) -> Self {
        let permits = permits.clamp(1, Semaphore::MAX_PERMITS);
        Bulkhead {
            semaphore: Semaphore::new(permits),
            permits: AtomicUsize::new(permits),
            debt: AtomicUsize::new(0),
        }
    }

    /// Takes a permit if one is free and nobody waits, without waiting. The caller must
    /// [`release`](Self::release) it.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
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
        match tokio::time::timeout_at(deadline, self.semaphore.acquire()).await {
            Ok(Ok(permit)) => {
                permit.forget();
                true
            }
            // Timed out, or closed (never: the bulkhead does not close its semaphore).
            Ok(Err(_)) | Err(_) => false,
        }
    }

    /// Returns a permit: to the oldest waiter, if any.
    #[inline]
    pub(crate) fn release(&self) {
        // One load on the usual path: no debt.
        if self.debt.load(Ordering::Acquire) != 0 && self.pay_one() {
            return;
        }
        self.semaphore.add_permits(1);
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
        let permits = permits.clamp(1, Semaphore::MAX_PERMITS);
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
                self.semaphore.add_permits(grow);
            }
        } else if permits < old {
            let shrink = old - permits;
            let forgotten = self.semaphore.forget_permits(shrink);
            if forgotten < shrink {
                self.debt.fetch_add(shrink - forgotten, Ordering::AcqRel);
            }
        }
    }

    /// Permits held right now.
    #[inline]
    pub(crate) fn in_use(&self) -> usize {
        // Permits owed are still held by calls.
        (self.permits.load(Ordering::Acquire) + self.debt.load(Ordering::Acquire))
            .saturating_sub(self.semaphore.available_permits())
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
