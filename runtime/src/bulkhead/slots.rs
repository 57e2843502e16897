//! The bulkhead's lock-free core: how many permits are held and how many callers wait
//! for one, in one atomic word. Synchronous and free of tokio, so the `model-check` crate
//! compiles this very file against loom's atomics.
//!
//! The word holds the permits in use in its low 32 bits and the registered waiters in
//! its high 32 bits. Because both live in one word, every decision is made on a single
//! consistent reading:
//!
//! - an uncontended acquire is one compare-and-swap while `in_use < limit`;
//! - a release is one `fetch_sub`, and the value it returns says whether anyone was
//!   registered *at that instant*: only then does the caller wake somebody;
//! - a caller that finds the bulkhead full registers in the same compare-and-swap that
//!   saw it full ([`Slots::acquire_or_register`]), so no release can fall between "it was
//!   full" and "I am registered" unseen: a release after the registration sees it and
//!   wakes, a release before it left a free permit, which the same CAS would have taken;
//! - a registered waiter takes a permit and deregisters in one step
//!   ([`Slots::acquire_registered`]), or leaves without one ([`Slots::deregister`]),
//!   which tells it to pass a wake-up on when a permit is free and others still wait,
//!   so that a waiter that was woken and then cancelled does not swallow it.

use crate::sync::{AtomicU64, Ordering};

/// One registered waiter, in the word's high half.
const ONE_WAITER: u64 = 1 << 32;
/// The permits in use, in the word's low half.
const IN_USE: u64 = ONE_WAITER - 1;

/// The permit count and waiter count of one bulkhead.
#[derive(Debug)]
pub(crate) struct Slots {
    /// `waiters << 32 | in_use`.
    word: AtomicU64,
    /// At most this many permits are held at once (1 ..= 2³² − 1).
    limit: u64,
}

impl Slots {
    /// A bulkhead of `limit` permits (clamped to 1 ..= 2³² − 1), none taken.
    pub(crate) fn new(limit: usize) -> Self {
        Slots {
            word: AtomicU64::new(0),
            limit: (limit as u64).clamp(1, IN_USE),
        }
    }

    /// Takes a permit if one is free. Never registers.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            if word & IN_USE >= self.limit {
                return false;
            }
            match self.word.compare_exchange_weak(
                word,
                word + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
    }

    /// Takes a permit if one is free (`true`); otherwise registers the caller as a
    /// waiter (`false`), in the same atomic step that saw the bulkhead full. A registered
    /// caller must end with [`acquire_registered`](Self::acquire_registered) returning
    /// `true` or with [`deregister`](Self::deregister).
    pub(crate) fn acquire_or_register(&self) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            let (next, acquired) = if word & IN_USE < self.limit {
                (word + 1, true)
            } else {
                (word + ONE_WAITER, false)
            };
            match self
                .word
                .compare_exchange_weak(word, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return acquired,
                Err(now) => word = now,
            }
        }
    }

    /// For a registered waiter: takes a free permit and deregisters (`true`), or stays
    /// registered (`false`).
    pub(crate) fn acquire_registered(&self) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            debug_assert!(word >= ONE_WAITER, "not registered");
            if word & IN_USE >= self.limit {
                return false;
            }
            match self.word.compare_exchange_weak(
                word,
                word + 1 - ONE_WAITER,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
    }

    /// For a registered waiter giving up (timed out or cancelled): deregisters. `true`
    /// means a permit is free while others still wait, so the caller must wake one of
    /// them: it may itself have been the one a release woke.
    pub(crate) fn deregister(&self) -> bool {
        let old = self.word.fetch_sub(ONE_WAITER, Ordering::AcqRel);
        debug_assert!(old >= ONE_WAITER, "not registered");
        let new = old - ONE_WAITER;
        new >= ONE_WAITER && new & IN_USE < self.limit
    }

    /// Returns a permit. `true` means a waiter was registered when it was returned, so
    /// the caller must wake one.
    #[inline]
    pub(crate) fn release(&self) -> bool {
        let old = self.word.fetch_sub(1, Ordering::Release);
        debug_assert!(old & IN_USE > 0, "a permit released twice");
        old >= ONE_WAITER
    }

    /// Permits held right now.
    #[inline]
    pub(crate) fn in_use(&self) -> usize {
        (self.word.load(Ordering::Relaxed) & IN_USE) as usize
    }

    /// Callers registered as waiting right now.
    pub(crate) fn waiters(&self) -> usize {
        (self.word.load(Ordering::Relaxed) >> 32) as usize
    }

    /// The number of permits.
    #[inline]
    pub(crate) fn limit(&self) -> usize {
        self.limit as usize
    }
}
