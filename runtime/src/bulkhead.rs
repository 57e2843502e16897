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

use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

/// One system's bulkhead.
#[derive(Debug)]
pub(crate) struct Bulkhead {
    semaphore: Semaphore,
    permits: usize,
}

impl Bulkhead {
    /// A bulkhead of `permits` permits (at least 1).
    pub(crate) fn new(permits: usize) -> Self {
        let permits = permits.clamp(1, Semaphore::MAX_PERMITS);
        Bulkhead {
            semaphore: Semaphore::new(permits),
            permits,
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
        self.semaphore.add_permits(1);
    }

    /// Permits held right now.
    #[inline]
    pub(crate) fn in_use(&self) -> usize {
        self.permits
            .saturating_sub(self.semaphore.available_permits())
    }

    /// The number of permits.
    #[inline]
    pub(crate) fn permits(&self) -> usize {
        self.permits
    }
}
