//! Hands a breaker's transitions to its observers one at a time, in the order they
//! happened, whichever threads made them.
//!
//! The core queues every transition under its lock, so the queue's order is the order
//! of the transitions. Whoever made a transition then calls [`Delivery::run`]: it takes
//! the delivery lock if it is free and hands over the queue oldest first; if the lock is
//! taken, the thread holding it hands this transition over too, and the caller goes on
//! at once. So an observer never sees two transitions at the same time or crossed, a
//! slow observer stalls only the one thread delivering, and an observer that acts on the
//! breaker from inside `on_transition` (force open, reset) only queues its transition:
//! the loop around it delivers that one next, with no deadlock.
//!
//! Nothing is left in the queue: the deliverer lets go of the delivery lock in the same
//! step, under the core's lock, as it finds the queue empty. A transition is queued under
//! the core's lock too, so it is either queued before that step (and delivered by this
//! loop) or after it; then its maker's `try_lock` comes after the release, and takes the
//! lock or finds a newer deliverer, which will see it.

use std::sync::TryLockError;

use super::machine::{Change, Machine};
use crate::sync::Mutex;

/// The delivery lock of one breaker.
#[derive(Debug, Default)]
pub(crate) struct Delivery {
    lock: Mutex<()>,
}

impl Delivery {
    pub(crate) fn new() -> Self {
        Delivery {
            lock: Mutex::new(()),
        }
    }

    /// Hands every transition `core` has queued to `deliver`, oldest first, unless
    /// another thread is doing so (it then delivers them). `deliver` must not panic
    /// (the breaker contains its observers' panics): a panic would leave the rest of
    /// the queue for the next transition to deliver.
    #[cold]
    pub(crate) fn run(&self, core: &Machine, mut deliver: impl FnMut(&Change)) {
        let mut held = Some(match self.lock.try_lock() {
            Ok(held) => held,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        });
        while let Some(change) = core.next_change_or(|| drop(held.take())) {
            deliver(&change);
        }
    }
}
