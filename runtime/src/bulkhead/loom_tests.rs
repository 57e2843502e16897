//! The bulkhead's protocol under loom, with a line of loom's primitives in place of
//! tokio's semaphore: every interleaving of a few callers (the fast path, counting
//! themselves waiting, waiting in line), a releaser, a waiter that gives up and a resize
//! keeps the bulkhead's promises: never more callers inside than permits, no permit lost
//! or made, no newcomer taking a permit a counted waiter is owed, and once everyone is
//! done nobody is counted waiting and every permit can be taken again.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use loom::future::block_on;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::line::Line;
use super::model_line::ModelLine;
use super::{Bulkhead, Limiter};

type Model = Bulkhead<ModelLine>;

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(model);
}

/// A bulkhead and the count of callers inside it.
struct Shared {
    bulkhead: Model,
    inside: AtomicUsize,
}

impl Shared {
    fn new(permits: usize) -> Arc<Self> {
        Arc::new(Shared {
            bulkhead: Bulkhead::new(permits),
            inside: AtomicUsize::new(0),
        })
    }

    /// Takes a permit as `acquire` does, without its deadline: the fast path, else
    /// counted waiting and in line until one comes.
    fn take(&self) {
        if !self.bulkhead.try_acquire() {
            block_on(self.bulkhead.wait_in_line());
        }
        self.enter();
    }

    /// One more caller inside: never more than `most`.
    fn enter_at_most(&self, most: usize) {
        let inside = self.inside.fetch_add(1, Ordering::AcqRel) + 1;
        assert!(
            inside <= most,
            "{inside} callers inside, at most {most} permits"
        );
    }

    fn enter(&self) {
        self.enter_at_most(self.bulkhead.permits());
    }

    /// Leaves and returns the permit.
    fn leave(&self) {
        self.inside.fetch_sub(1, Ordering::AcqRel);
        self.bulkhead.release();
    }

    /// Once everyone is done: nobody counted waiting, every permit back (free in the
    /// word, or in the line for the next caller), and exactly `permits` can be taken.
    fn assert_all_back(&self, permits: usize) {
        let (waiting, free, in_line) = self.bulkhead.parts();
        assert_eq!(waiting, 0, "nobody is counted waiting");
        assert_eq!(self.bulkhead.owed(), 0, "nothing is owed");
        assert_eq!(free as usize + in_line, permits, "every permit is back");
        assert_eq!(self.bulkhead.in_use(), 0);
        for _ in 0..permits {
            assert!(self.bulkhead.try_acquire());
        }
        assert!(!self.bulkhead.try_acquire(), "and no more than the size");
    }
}

/// Polls `future` once, with a waker that does nothing.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn two_callers_and_a_release_never_share_one_permit_and_lose_none() {
    check(|| {
        let shared = Shared::new(1);
        shared.take(); // held by a call that ends below
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    shared.take();
                    shared.leave();
                })
            })
            .collect();
        shared.leave();
        for caller in callers {
            caller.join().unwrap();
        }
        shared.assert_all_back(1);
    });
}

#[test]
fn a_waiter_that_gives_up_at_any_point_leaves_its_permit_to_the_others() {
    check(|| {
        let shared = Shared::new(1);
        shared.take();
        let quitter = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut wait = pin!(async {
                    if !shared.bulkhead.try_acquire() {
                        shared.bulkhead.wait_in_line().await;
                    }
                });
                if poll_once(wait.as_mut()).is_ready() {
                    shared.enter();
                    shared.leave();
                }
                // Else it gives up here, in line or counted: dropped.
            })
        };
        let caller = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                shared.take();
                shared.leave();
            })
        };
        shared.leave();
        quitter.join().unwrap();
        caller.join().unwrap();
        shared.assert_all_back(1);
    });
}

#[test]
fn a_newcomer_never_takes_the_permit_a_counted_waiter_is_owed() {
    check(|| {
        let shared = Shared::new(1);
        shared.take();
        // Counted waiting, not yet in the line: the narrowest place to be overtaken.
        let waiting = shared
            .bulkhead
            .count_waiting()
            .expect("nothing free: it waits");
        let newcomer = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || shared.bulkhead.try_acquire())
        };
        shared.leave();
        assert!(
            !newcomer.join().unwrap(),
            "the newcomer took the counted waiter's permit"
        );
        block_on(shared.bulkhead.line.wait());
        drop(waiting);
        shared.enter();
        shared.leave();
        shared.assert_all_back(1);
    });
}

#[test]
fn a_resize_while_callers_wait_and_return_keeps_every_permit() {
    check(|| {
        let shared = Shared::new(1);
        shared.take();
        let caller = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                shared.take_at_most(2);
                shared.leave();
            })
        };
        let reload = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                shared.bulkhead.resize(2);
                shared.bulkhead.resize(1);
            })
        };
        shared.leave();
        caller.join().unwrap();
        reload.join().unwrap();
        shared.assert_all_back(1);
    });
}

#[test]
fn a_shrink_racing_the_releases_it_is_owed_is_paid_by_them() {
    check(|| {
        let shared = Shared::new(2);
        shared.take();
        shared.take();
        let holder = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || shared.leave())
        };
        let reload = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || shared.bulkhead.resize(1))
        };
        shared.leave();
        holder.join().unwrap();
        reload.join().unwrap();
        shared.assert_all_back(1);
    });
}

impl Shared {
    /// [`take`](Self::take) while a resize runs: at most `most` inside, the largest
    /// size it sets.
    fn take_at_most(&self, most: usize) {
        if !self.bulkhead.try_acquire() {
            block_on(self.bulkhead.wait_in_line());
        }
        self.enter_at_most(most);
    }
}

/// An adaptive limiter of `max_connections` (its ceiling `max_connections × 0.8`).
fn limiter(max_connections: u32) -> (Limiter, outbound_guard_settings::SystemSettings) {
    let text =
        format!("[systems.s]\nbulkhead = \"adaptive\"\nmax_connections = {max_connections}\n");
    let settings = outbound_guard_settings::Settings::parse(&text, "loom")
        .unwrap()
        .system("s")
        .unwrap()
        .clone();
    (Limiter::new(&settings), settings)
}

#[test]
fn limit_updates_racing_a_reload_and_the_permits_lose_no_update() {
    check(|| {
        // A ceiling of 2 (max_connections 3), the limit at 2; one permit held.
        let (limiter, _) = limiter(3);
        let limiter = Arc::new(limiter);
        let shared = Shared::new(1);
        limiter.set(&shared.bulkhead, 2);
        assert_eq!(shared.bulkhead.permits(), 2);
        shared.take();
        // A reload to a ceiling of 3 (max_connections 4), keeping the limit.
        let (_, wider) = self::limiter(4);
        let reload = {
            let (limiter, shared) = (Arc::clone(&limiter), Arc::clone(&shared));
            thread::spawn(move || limiter.reconfigure(&shared.bulkhead, &wider, true))
        };
        // A window's end cutting the limit to 1.
        let cut = {
            let (limiter, shared) = (Arc::clone(&limiter), Arc::clone(&shared));
            thread::spawn(move || limiter.set(&shared.bulkhead, 1))
        };
        let caller = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                shared.take_at_most(3);
                shared.leave();
            })
        };
        shared.leave();
        reload.join().unwrap();
        cut.join().unwrap();
        caller.join().unwrap();
        // Whatever the order, the bulkhead's size is the limit the limiter shows, and
        // every permit of it is back.
        let limit = limiter.limit().expect("adaptive");
        assert_eq!(shared.bulkhead.permits(), limit);
        assert!(limit == 1 || limit == 2, "{limit}");
        shared.assert_all_back(limit);
    });
}

#[test]
fn two_windows_ending_at_once_leave_the_bulkhead_at_the_later_limit() {
    check(|| {
        let (limiter, _) = limiter(4); // a ceiling of 3
        let limiter = Arc::new(limiter);
        let shared = Shared::new(1);
        limiter.set(&shared.bulkhead, 3);
        shared.take();
        shared.take();
        let windows: Vec<_> = [1, 3]
            .into_iter()
            .map(|to| {
                let (limiter, shared) = (Arc::clone(&limiter), Arc::clone(&shared));
                thread::spawn(move || limiter.set(&shared.bulkhead, to))
            })
            .collect();
        let holder = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || shared.leave())
        };
        shared.leave();
        for window in windows {
            window.join().unwrap();
        }
        holder.join().unwrap();
        let limit = limiter.limit().expect("adaptive");
        assert_eq!(shared.bulkhead.permits(), limit);
        shared.assert_all_back(limit);
    });
}
