//! The bulkhead (R-RES-BH-1): at most `permits` calls of a system at once, a caller
//! waiting at most `bulkhead_wait` for a permit when it is full. An adaptive bulkhead
//! (`limiter.rs`) resizes it, between its floor and the settings' permits, as latency
//! says.
//!
//! Fair: first come, first served. A released permit goes to the oldest waiter, and a
//! caller arriving while others wait queues behind them, so nobody can overtake a waiter
//! and starve it until its `bulkhead_wait` runs out.
//!
//! Two places hold free permits, and one word decides which:
//! - `word` packs the free permits nobody waits for with the number of callers waiting
//!   and the permits a shrink owes (`waiting << 40 | owed << 20 | free`). Taking a permit is one compare-and-swap that succeeds only
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
//! to the semaphore, where the caller finds it (a newcomer does not take it from there
//! while anyone is counted waiting, even one that has not joined the semaphore's line
//! yet). A permit left in the semaphore with nobody waiting (its waiter gave up as it
//! came) is taken by the next caller that finds the word empty: the semaphore hands out
//! a permit only when none of its waiters is owed it, so that does not overtake anyone
//! either.
//!
//! A shrink below the permits in use revokes none: it owes them, counted in the word
//! until released permits pay them. So a release decides in one compare-and-swap
//! whether its permit is free (nobody waits, nothing owed) or goes to the slow path,
//! which pays what is owed before it serves the line, also in one compare-and-swap: no
//! release can free a permit after a shrink has counted it owed.
//!
//! Permits are held as counts, not as `SemaphorePermit`s (the call's permit is one
//! pointer to its guard): one taken from the semaphore is `forget`-ten, and goes back
//! through [`Bulkhead::release`] like any other.
//!
//! The protocol is written against [`Line`], the semaphore's part in it, so that its
//! steps can be driven one at a time: `tests.rs` puts each step between the others
//! (a permit returned between a caller's failed first look and its counting itself
//! waiting, a shrink while permits sit in the line, …), and `loom_tests.rs` checks every
//! interleaving of a few callers, a releaser, a cancelled waiter and a resize, with a
//! line of loom's primitives (`model_line.rs`) in place of tokio's semaphore.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};
use std::time::Duration;

use crossbeam_utils::CachePadded;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::sync::{AtomicU64, AtomicUsize, Ordering};
use limiter::Resize;
pub(crate) use limiter::{Change, Limiter};
use line::Line;

#[cfg(all(test, not(outbound_guard_loom)))]
mod adaptive_tests;
#[cfg(all(test, not(outbound_guard_loom)))]
mod guard_tests;
mod limiter;
mod line;
#[cfg(all(test, outbound_guard_loom))]
mod loom_tests;
#[cfg(all(test, outbound_guard_loom))]
mod model_line;
#[cfg(all(test, not(outbound_guard_loom)))]
mod model_tests;
#[cfg(test)]
mod tests;

/// The free permits nobody waits for: the word's low 20 bits.
const FREE: u64 = (1 << 20) - 1;
/// One permit a shrink owes: bits 20 to 39 count them.
const OWED: u64 = 1 << 20;
/// One caller waiting: the high 24 bits count them (16 million callers waiting on one
/// system's bulkhead would be needed to reach the top).
const WAITER: u64 = 1 << 40;

/// One system's bulkhead; its waiters wait in `L`'s line (tokio's semaphore in a
/// service).
#[derive(Debug)]
pub(crate) struct Bulkhead<L = Semaphore> {
    /// `waiting << 40 | owed << 20 | free`; on a cache line of its own, the only one an
    /// uncontended call writes.
    word: CachePadded<AtomicU64>,
    /// The waiters' line, and the permits handed to it while anyone waits.
    line: L,
    /// The size; changed only by [`resize`](Self::resize).
    permits: AtomicUsize,
}

/// Counts a caller waiting until dropped: its wait ended, with a permit or without (or
/// the wait was cancelled).
struct Waiting<'a>(&'a AtomicU64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(WAITER, Ordering::AcqRel);
    }
}

impl<L: Line> Resize for Bulkhead<L> {
    fn in_use(&self) -> usize {
        Bulkhead::in_use(self)
    }

    fn size(&self) -> usize {
        self.permits()
    }

    fn resize(&self, size: usize) {
        Bulkhead::resize(self, size);
    }
}

pin_project_lite::pin_project! {
    /// A caller waiting in line, counted waiting until its wait is over or dropped.
    /// Dropped after the line handed it a permit it had not taken yet (cancelled, or its
    /// `bulkhead_wait` ran out just then), it takes that permit and returns it as a
    /// call's end does ([`Bulkhead::release`]: what a shrink owes is paid first), rather
    /// than letting the line hand it on to the next waiter past a lowered size.
    struct InLine<'a, L, W>
    where
        L: Line,
        W: Future<Output = ()>,
    {
        bulkhead: &'a Bulkhead<L>,
        waiting: Option<Waiting<'a>>,
        #[pin]
        wait: W,
        over: bool,
    }

    impl<'a, L, W> PinnedDrop for InLine<'a, L, W>
    where
        L: Line,
        W: Future<Output = ()>,
    {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if *this.over {
                return;
            }
            let handed = this.wait.poll(&mut Context::from_waker(Waker::noop()));
            if handed.is_ready() {
                drop(this.waiting.take());
                this.bulkhead.release();
            }
        }
    }
}

impl<L: Line, W: Future<Output = ()>> Future for InLine<'_, L, W> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        ready!(this.wait.poll(cx));
        *this.over = true;
        drop(this.waiting.take());
        Poll::Ready(())
    }
}

impl<L: Line> Bulkhead<L> {
    /// The most permits a bulkhead has (the settings allow 80,000): what the word's
    /// free bits hold, and the line takes.
    const MAX_PERMITS: usize = if (FREE as usize) < L::MAX_PERMITS {
        FREE as usize
    } else {
        L::MAX_PERMITS
    };

    /// A bulkhead of `permits` permits (at least 1, at most what the word holds).
    pub(crate) fn new(permits: usize) -> Self {
        let permits = permits.clamp(1, Self::MAX_PERMITS);
        Bulkhead {
            word: CachePadded::new(AtomicU64::new(permits as u64)),
            line: L::empty(),
            permits: AtomicUsize::new(permits),
        }
    }

    /// Takes a permit if one is free and nobody waits, without waiting. The caller must
    /// [`release`](Self::release) it.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        // Nobody waiting, nothing owed and a permit free: the word is 1..=FREE.
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
        self.take_left_in_line(word)
    }

    /// [`try_acquire`](Self::try_acquire) when the word, last seen as `word`, had no
    /// free permit: if nobody is counted waiting (nor anything owed), a permit left in
    /// the line by a waiter that gave up as it came. While anyone is counted waiting, a
    /// permit in the line is theirs even before they have joined it (they join it right
    /// after counting themselves).
    #[cold]
    fn take_left_in_line(&self, word: u64) -> bool {
        word == 0 && self.line.try_take()
    }

    /// Takes a permit, waiting in line at most `wait` for one; `false` if none came in
    /// time. A `wait` of zero never waits. Cancel-safe: dropped while waiting, it holds
    /// nothing and leaves the line (a permit it was being given goes on to the next
    /// waiter).
    pub(crate) async fn acquire(&self, wait: Duration) -> bool {
        if self.try_acquire() {
            return true;
        }
        if wait.is_zero() {
            return false;
        }
        let deadline = Instant::now() + wait;
        tokio::time::timeout_at(deadline, self.wait_in_line())
            .await
            .is_ok()
    }

    /// Waits in line until it has a permit, counted waiting meanwhile. Cancel-safe, as
    /// [`acquire`](Self::acquire).
    async fn wait_in_line(&self) {
        let Some(waiting) = self.count_waiting() else {
            return; // a permit came back meanwhile
        };
        InLine {
            bulkhead: self,
            waiting: Some(waiting),
            wait: self.line.wait(),
            over: false,
        }
        .await;
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

    /// Returns a permit: free again if nobody waits, else to pay what a shrink owes,
    /// else to the oldest waiter.
    #[inline]
    pub(crate) fn release(&self) {
        let mut word = self.word.load(Ordering::Relaxed);
        // Nobody waits and nothing is owed: the word is its free permits, fewer than
        // the size.
        while word < OWED {
            match self.word.compare_exchange_weak(
                word,
                word + 1,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => word = now,
            }
        }
        self.release_slow();
    }

    /// [`release`](Self::release) when someone waits or a permit is owed: paying what
    /// is owed comes first; if nobody waits any more, the permit is free after all;
    /// else it goes to the line.
    #[cold]
    fn release_slow(&self) {
        let kept = self
            .word
            .fetch_update(Ordering::Release, Ordering::Relaxed, |word| {
                if word & (FREE << 20) != 0 {
                    Some(word - OWED)
                } else if word < WAITER {
                    Some(word + 1)
                } else {
                    None
                }
            });
        if kept.is_err() {
            self.line.add(1);
        }
    }

    /// Makes the bulkhead `permits` permits (at least 1) without revoking a permit in
    /// use: growing first cancels what a shrink still owes, then adds permits (to the
    /// waiters first); shrinking takes back free permits (the line's, then the word's)
    /// and owes the rest, paid by the permits released next. Callers serialise resizes
    /// (they hold the [`Limiter`]'s lock).
    pub(crate) fn resize(&self, permits: usize) {
        let permits = permits.clamp(1, Self::MAX_PERMITS);
        let old = self.permits.swap(permits, Ordering::AcqRel);
        if permits > old {
            let grow = (permits - old) as u64;
            let mut to_line = 0;
            let _ = self
                .word
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                    let cancelled = ((word >> 20) & FREE).min(grow);
                    let word = word - cancelled * OWED;
                    let added = grow - cancelled;
                    if word < OWED {
                        to_line = 0;
                        Some(word + added)
                    } else {
                        to_line = added;
                        Some(word)
                    }
                });
            if to_line > 0 {
                self.line.add(to_line as usize);
            }
        } else if permits < old {
            let shrink = old - permits;
            // Permits left in the line by waiters that gave up, then the word's.
            let owed = (shrink - self.line.take_back(shrink)) as u64;
            if owed > 0 {
                let _ = self
                    .word
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                        let forgotten = (word & FREE).min(owed);
                        Some(word - forgotten + (owed - forgotten) * OWED)
                    });
            }
        }
    }

    /// Permits held right now.
    #[inline]
    pub(crate) fn in_use(&self) -> usize {
        // Permits owed are still held by calls.
        let word = self.word.load(Ordering::Acquire);
        let (owed, free) = (((word >> 20) & FREE) as usize, (word & FREE) as usize);
        (self.permits.load(Ordering::Acquire) + owed).saturating_sub(free + self.line.held())
    }

    /// The number of permits.
    #[inline]
    pub(crate) fn permits(&self) -> usize {
        self.permits.load(Ordering::Acquire)
    }
}
