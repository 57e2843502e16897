//! Bulkhead permits held by calls already counted slow, and the rule for when a
//! turned-away caller counts against the breaker.
//!
//! The guide opens the breaker when the external system "clearly does not work", and
//! counts slow calls as failures. A bulkhead in which every permit is held by a call
//! already past `cb_slow_threshold` is that: the system is not answering in time, and
//! the callers it keeps out are calls it fails. So a caller counts as one failure (while
//! closed) when **the bulkhead was already failing as its wait began** — some permit held
//! by a slow call — **and, when its `bulkhead_wait` ends without a permit, every permit
//! is**, no slow call having ended in between (each end starts a new *episode*).
//!
//! There is no cap per episode: a hang keeps every caller out, and every one of them is
//! evidence. What keeps the rule to hangs:
//! - a bulkhead with even one permit held by a call that is not (yet) slow is plain load
//!   and adds nothing, however long it stays full;
//! - a caller that began waiting before any holder was slow adds nothing: a slow call
//!   that ends within `bulkhead_wait` of turning slow lets its waiters in, so one slow
//!   call among healthy ones, even in a bulkhead of one permit, adds only itself. A call
//!   that stays hung for longer, with every caller turned away, is the system not
//!   working, in a bulkhead of one permit as in one of eight;
//! - half-open, the trials alone decide (the caller's side, in `Guard`, counts only
//!   while closed in the generation its wait began in).
//!
//! With the guide's defaults (8 permits, 15 s slow threshold, 2 s wait) and one caller
//! every 100 ms, a hang behind a window of 50 successes opens the breaker about 19 s
//! after it began: the 8 hung calls turn slow at 15 s, callers that began waiting then
//! are turned away from 17 s on, and 8 slow calls and 17 such callers are half the
//! window.
//!
//! `loom_tests` checks the rule under every interleaving (built with
//! `--cfg outbound_guard_loom`); `runtime/tests/fast_fail.rs` checks it through the
//! public API.

use crate::sync::{AtomicU64, Ordering};

/// `episode << 32 | held`: the permits held by slow calls now, and how many times a slow
/// call has ended (wrapping).
#[derive(Debug, Default)]
pub(crate) struct SlowHolders {
    word: AtomicU64,
}

const HELD: u64 = (1 << 32) - 1;

fn split(word: u64) -> (u32, u64) {
    ((word >> 32) as u32, word & HELD)
}

fn join(episode: u32, held: u64) -> u64 {
    u64::from(episode) << 32 | held.min(HELD)
}

/// The slow calls holding permits as a waiter saw them when its wait began: some call
/// was slow, and this many slow calls had ended before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Episode(u32);

impl SlowHolders {
    /// A call holding a permit was counted slow: one more slow holder.
    #[cold]
    pub(crate) fn counted_slow(&self) {
        let _ = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let (episode, held) = split(word);
                Some(join(episode, held + 1))
            });
    }

    /// A call counted slow ended (or was cancelled): its permit is about to be returned,
    /// and the episode in which every permit was slow-held, if it was one, is over.
    #[cold]
    pub(crate) fn ended(&self) {
        let _ = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let (episode, held) = split(word);
                Some(join(episode.wrapping_add(1), held.saturating_sub(1)))
            });
    }

    /// Permits held by calls counted slow, now.
    pub(crate) fn held(&self) -> usize {
        usize::try_from(split(self.word.load(Ordering::Acquire)).1).unwrap_or(usize::MAX)
    }

    /// The episode under way if some permit is held by a slow call now: what a waiter
    /// remembers as its wait begins.
    pub(crate) fn slow_held(&self) -> Option<Episode> {
        let (episode, held) = split(self.word.load(Ordering::Acquire));
        (held > 0).then_some(Episode(episode))
    }

    /// Whether every one of `permits` is held by a slow call now, and no slow call ended
    /// since `since` was read.
    pub(crate) fn saturated_since(&self, permits: usize, since: Episode) -> bool {
        let (episode, held) = split(self.word.load(Ordering::Acquire));
        held >= permits as u64 && Episode(episode) == since
    }
}

#[cfg(all(test, outbound_guard_loom))]
mod loom_tests;

#[cfg(test)]
mod tests {
    use super::SlowHolders;

    #[test]
    fn a_wait_counts_once_every_permit_is_slow_held_by_the_same_episode() {
        let slow = SlowHolders::default();
        assert_eq!(
            slow.slow_held(),
            None,
            "no slow call: a waiter never counts"
        );
        slow.counted_slow();
        let began = slow.slow_held().unwrap();
        assert!(slow.saturated_since(1, began));
        assert!(
            !slow.saturated_since(2, began),
            "one of two permits is plain load"
        );
        slow.counted_slow();
        assert!(slow.saturated_since(2, began));
        assert_eq!(slow.held(), 2);
    }

    #[test]
    fn a_wait_across_the_end_of_a_slow_call_does_not_count() {
        let slow = SlowHolders::default();
        slow.counted_slow();
        slow.counted_slow();
        let began = slow.slow_held().unwrap();
        // A slow call ends and its permit's next holder turns slow: saturated again,
        // but not throughout.
        slow.ended();
        assert!(!slow.saturated_since(2, began));
        slow.counted_slow();
        assert!(!slow.saturated_since(2, began), "another episode");
        let again = slow.slow_held().unwrap();
        assert!(slow.saturated_since(2, again));
    }

    #[test]
    fn the_episode_wraps_without_touching_the_count() {
        let slow = SlowHolders::default();
        slow.word
            .store(super::join(u32::MAX, 3), crate::sync::Ordering::Release);
        let began = slow.slow_held().unwrap();
        slow.ended();
        assert_eq!(slow.held(), 2);
        assert!(!slow.saturated_since(2, began));
        assert!(slow.saturated_since(2, slow.slow_held().unwrap()));
    }
}
