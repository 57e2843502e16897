//! The bulkhead's protocol under loom: the runtime's own [`Slots`] (compiled from
//! `runtime/src/bulkhead/slots.rs`), driven exactly as `runtime/src/bulkhead.rs` drives
//! it, with a model of the tokio `Notify` it waits on.
//!
//! The model keeps tokio's semantics that the protocol relies on, and no more:
//! `enable` puts a waiter in a FIFO queue, or consumes the single stored wake-up;
//! `notify_one` wakes the oldest queued waiter, or stores one wake-up if none is queued
//! (several collapse into one); a waiter that sleeps blocks until it is woken. A waiter
//! that gives up drops its `Notified`; tokio then forwards a `notify_one` it had received,
//! but the checks here drop it *without* forwarding, to show that the bulkhead's own
//! hand-on ([`Slots::deregister`]) is enough.
//!
//! Loom explores the interleavings; a lost wake-up shows up as a deadlock (a waiter
//! asleep forever with a free permit), which loom reports. Checked: never more than
//! `limit` holders at once; every waiter gets a permit when permits free up; a waiter
//! cancelled after it was woken does not leave another waiter asleep; the word ends at
//! zero permits and zero waiters.

use std::collections::VecDeque;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use crate::slots::Slots;

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(model);
}

/// tokio's `Notify`, as far as the bulkhead uses it. Waiters are numbered by the test.
#[derive(Default)]
struct Notify {
    state: Mutex<Queue>,
    woken: Condvar,
}

#[derive(Default)]
struct Queue {
    /// Enabled waiters not yet woken, oldest first.
    waiting: VecDeque<usize>,
    /// Waiters woken and not yet consumed it.
    notified: Vec<usize>,
    /// The one stored wake-up of a `notify_one` that found nobody queued.
    stored: bool,
}

impl Queue {
    fn notify_one(&mut self) -> bool {
        match self.waiting.pop_front() {
            Some(id) => {
                self.notified.push(id);
                true
            }
            None => {
                self.stored = true;
                false
            }
        }
    }
}

impl Notify {
    /// `Notified::enable`: queued, or woken at once by the stored wake-up.
    fn enable(&self, id: usize) {
        let mut q = self.state.lock().unwrap();
        if q.notified.contains(&id) || q.waiting.contains(&id) {
            return;
        }
        if q.stored {
            q.stored = false;
            q.notified.push(id);
        } else {
            q.waiting.push_back(id);
        }
    }

    fn notify_one(&self) {
        if self.state.lock().unwrap().notify_one() {
            self.woken.notify_all();
        }
    }

    /// Awaiting the enabled `Notified`: sleeps until woken, consuming the wake-up.
    fn wait(&self, id: usize) {
        let mut q = self.state.lock().unwrap();
        while !q.notified.contains(&id) {
            q = self.woken.wait(q).unwrap();
        }
        q.notified.retain(|&n| n != id);
    }

    /// Dropping the `Notified` unconsumed; `forward` as tokio does with a received
    /// `notify_one`.
    fn drop_notified(&self, id: usize, forward: bool) {
        let mut q = self.state.lock().unwrap();
        q.waiting.retain(|&n| n != id);
        let had = q.notified.contains(&id);
        q.notified.retain(|&n| n != id);
        if had && forward && q.notify_one() {
            drop(q);
            self.woken.notify_all();
        }
    }
}

/// One bulkhead: the real core, the modelled notify, and a count of holders.
struct Bulkhead {
    slots: Slots,
    notify: Notify,
    limit: usize,
    holders: AtomicUsize,
}

impl Bulkhead {
    fn new(limit: usize) -> Arc<Self> {
        Arc::new(Bulkhead {
            slots: Slots::new(limit),
            notify: Notify::default(),
            limit,
            holders: AtomicUsize::new(0),
        })
    }

    /// Got a permit: never more holders than permits.
    fn hold(&self) {
        let holders = self.holders.fetch_add(1, Ordering::SeqCst) + 1;
        assert!(
            holders <= self.limit,
            "{holders} holders of {} permits",
            self.limit
        );
    }

    /// `Bulkhead::release`.
    fn release(&self) {
        self.holders.fetch_sub(1, Ordering::SeqCst);
        if self.slots.release() {
            self.notify.notify_one();
        }
    }

    /// `Guard::bulkhead`'s fast path, then `Bulkhead::acquire` with no deadline: loops
    /// until it holds a permit (a lost wake-up is a deadlock).
    fn acquire(&self, id: usize) {
        if self.slots.try_acquire() || self.slots.acquire_or_register() {
            return self.hold();
        }
        loop {
            self.notify.enable(id);
            if self.slots.acquire_registered() {
                self.notify.drop_notified(id, true);
                return self.hold();
            }
            self.notify.wait(id);
        }
    }

    /// `Bulkhead::acquire` cancelled (or timed out) while registered: it tries once,
    /// possibly gets woken, then gives up without tokio's forwarding.
    fn acquire_then_give_up(&self, id: usize) -> bool {
        if self.slots.acquire_or_register() {
            self.hold();
            return true;
        }
        self.notify.enable(id);
        if self.slots.acquire_registered() {
            self.notify.drop_notified(id, true);
            self.hold();
            return true;
        }
        thread::yield_now();
        self.notify.drop_notified(id, false);
        if self.slots.deregister() {
            self.notify.notify_one();
        }
        false
    }

    fn assert_idle(&self) {
        assert_eq!(self.slots.in_use(), 0, "every permit returned");
        assert_eq!(self.slots.waiters(), 0, "no waiter left registered");
        assert_eq!(self.holders.load(Ordering::SeqCst), 0);
    }
}

fn spawn(b: &Arc<Bulkhead>, f: impl FnOnce(&Bulkhead) + Send + 'static) -> thread::JoinHandle<()> {
    let b = b.clone();
    thread::spawn(move || f(&b))
}

#[test]
fn two_waiters_both_get_the_one_permit_as_it_frees_up() {
    check(|| {
        let b = Bulkhead::new(1);
        b.acquire(9);
        let waiters: Vec<_> = (0..2)
            .map(|id| {
                spawn(&b, move |b| {
                    b.acquire(id);
                    b.release();
                })
            })
            .collect();
        b.release();
        for w in waiters {
            w.join().unwrap();
        }
        b.assert_idle();
    });
}

#[test]
fn a_waiter_cancelled_after_its_wake_up_does_not_swallow_it() {
    check(|| {
        let b = Bulkhead::new(1);
        b.acquire(9);
        let quitter = spawn(&b, |b| {
            if b.acquire_then_give_up(0) {
                b.release();
            }
        });
        let waiter = spawn(&b, |b| {
            b.acquire(1);
            b.release();
        });
        b.release();
        quitter.join().unwrap();
        waiter.join().unwrap();
        b.assert_idle();
    });
}

#[test]
fn never_more_holders_than_permits() {
    check(|| {
        let b = Bulkhead::new(2);
        let callers: Vec<_> = (0..2)
            .map(|id| {
                spawn(&b, move |b| {
                    b.acquire(id);
                    b.release();
                })
            })
            .collect();
        b.acquire(2);
        b.release();
        for c in callers {
            c.join().unwrap();
        }
        b.assert_idle();
    });
}

#[test]
fn the_fast_path_admits_exactly_the_limit() {
    check(|| {
        let slots = Arc::new(Slots::new(1));
        let other = {
            let slots = slots.clone();
            thread::spawn(move || slots.try_acquire())
        };
        let mine = slots.try_acquire();
        let theirs = other.join().unwrap();
        assert!(mine ^ theirs, "exactly one of two gets the one permit");
        assert_eq!(slots.in_use(), 1);
        assert!(!slots.release(), "nobody registered, nobody to wake");
        assert_eq!(slots.in_use(), 0);
    });
}

#[test]
fn a_release_sees_a_waiter_registered_before_it() {
    // The Dekker corner, in one word: a caller that registers because the bulkhead is
    // full, and the holder's release, race. Either the caller's registering step saw the
    // permit free (and took it), or the release saw the caller registered (and wakes).
    check(|| {
        let slots = Arc::new(Slots::new(1));
        assert!(slots.try_acquire());
        let holder = {
            let slots = slots.clone();
            thread::spawn(move || slots.release())
        };
        let acquired = slots.acquire_or_register();
        let woke = holder.join().unwrap();
        assert!(acquired != woke, "acquired {acquired}, release woke {woke}");
        if !acquired {
            assert!(
                slots.acquire_registered(),
                "the freed permit is there for the waiter"
            );
        }
        assert_eq!((slots.in_use(), slots.waiters()), (1, 0));
    });
}
