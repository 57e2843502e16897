//! The bulkhead (R-RES-BH-1): at most `permits` calls of a system at once, a caller
//! waiting at most `bulkhead_wait` for a permit when it is full.
//!
//! The uncontended path is the lock-free [`Slots`] word alone: taking a permit is one
//! compare-and-swap, returning it one atomic subtraction, and nothing else happens while
//! nobody waits (a tokio `Semaphore` takes its waiter list's mutex on every release).
//!
//! Only a caller that finds it full waits, on a `tokio::sync::Notify`, thinly:
//!
//! 1. it registers in the same atomic step that saw the bulkhead full
//!    ([`Slots::acquire_or_register`]);
//! 2. in a loop: it enables a `Notified` (so it is in the notify's queue, or consumes a
//!    stored wake-up), *then* tries to take a permit as a registered waiter, and only
//!    then sleeps until woken or until its deadline;
//! 3. a release that saw a registered waiter calls `notify_one`.
//!
//! No lost wake-up: a waiter sleeps only after a try that failed while its `Notified`
//! was already enabled; a permit freed after that try is a release that saw the waiter
//! registered, so it calls `notify_one`, which wakes an enabled waiter (or is stored for
//! the next one to enable, which then tries again). The woken waiter either takes the
//! permit, or finds another caller took it first (whose own release will wake again),
//! or gives up: then [`Slots::deregister`] tells it to pass the wake-up on whenever a
//! permit is free and others still wait (tokio's `Notified` also forwards a `notify_one`
//! it received when dropped). So a cancelled or timed-out waiter leaks no permit (it
//! never held one) and swallows no wake-up. Never more than `permits` holders: every
//! permit is taken by a compare-and-swap that checks `in_use < limit`.
//!
//! The model check of this protocol (the real `Slots`, and a loom model of the notify's
//! queue) is in the `model-check` crate.

use std::pin::pin;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

mod slots;

pub(crate) use slots::Slots;

/// One system's bulkhead.
#[derive(Debug)]
pub(crate) struct Bulkhead {
    slots: Slots,
    /// Wakes waiters; only touched when somebody waits.
    notify: Notify,
}

impl Bulkhead {
    /// A bulkhead of `permits` permits (at least 1).
    pub(crate) fn new(permits: usize) -> Self {
        Bulkhead {
            slots: Slots::new(permits),
            notify: Notify::new(),
        }
    }

    /// Takes a permit if one is free, without waiting. The caller must
    /// [`release`](Self::release) it.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        self.slots.try_acquire()
    }

    /// Takes a permit, waiting at most `wait` for one; `false` if none came free in
    /// time. Cancel-safe: dropped while waiting, it holds nothing and passes on any
    /// wake-up it was given.
    pub(crate) async fn acquire(&self, wait: Duration) -> bool {
        if self.slots.acquire_or_register() {
            return true;
        }
        let registered = Registered(self);
        let deadline = Instant::now() + wait;
        loop {
            let mut notified = pin!(self.notify.notified());
            notified.as_mut().enable();
            if self.slots.acquire_registered() {
                std::mem::forget(registered);
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                // Dropping `registered` deregisters, passing a wake-up on if needed.
                return false;
            }
        }
    }

    /// Returns a permit; wakes a waiter if one is registered.
    #[inline]
    pub(crate) fn release(&self) {
        if self.slots.release() {
            self.notify.notify_one();
        }
    }

    /// Permits held right now.
    #[inline]
    pub(crate) fn in_use(&self) -> usize {
        self.slots.in_use()
    }

    /// The number of permits.
    #[inline]
    pub(crate) fn permits(&self) -> usize {
        self.slots.limit()
    }

    /// Callers waiting for a permit right now.
    pub(crate) fn waiters(&self) -> usize {
        self.slots.waiters()
    }
}

/// A registered waiter that has not got its permit: deregisters when dropped.
struct Registered<'b>(&'b Bulkhead);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if self.0.slots.deregister() {
            self.0.notify.notify_one();
        }
    }
}
