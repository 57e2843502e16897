//! Bulkhead permits held by calls already counted slow, and the rule for how many
//! turned-away callers they may stand for.
//!
//! A bulkhead full of calls that have all run past `cb_slow_threshold` is the system
//! failing, not load: a caller whose bounded wait ends then is counted by the breaker as
//! one failure (while closed). The cap: **each call counted slow vouches for at most one
//! such caller** — the call it kept out. A waiter takes one voucher; a slow call's
//! voucher lapses when the call ends. So one saturation episode (the same slow calls
//! filling the bulkhead) adds at most `permits` failures, inferred failures never
//! outnumber the slow calls actually seen, and a burst of hundreds of waiters cannot
//! flush the window's history. A bulkhead with even one permit held by a call that is
//! not (yet) slow is plain load and adds nothing.
//!
//! `loom_tests` checks the rule under every interleaving (built with
//! `--cfg outbound_guard_loom`); `runtime/tests/fast_fail.rs` checks it through the
//! public API.

use crate::sync::{AtomicU64, Ordering};

/// `held << 32 | vouchers`, with `vouchers ≤ held` always.
#[derive(Debug, Default)]
pub(crate) struct SlowHolders {
    word: AtomicU64,
}

const VOUCHERS: u64 = (1 << 32) - 1;

fn split(word: u64) -> (u64, u64) {
    (word >> 32, word & VOUCHERS)
}

fn join(held: u64, vouchers: u64) -> u64 {
    held << 32 | vouchers.min(held)
}

impl SlowHolders {
    /// A call holding a permit was counted slow: one more slow holder, one more voucher.
    #[cold]
    pub(crate) fn counted_slow(&self) {
        let _ = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let (held, vouchers) = split(word);
                Some(join(held + 1, vouchers + 1))
            });
    }

    /// A call counted slow ended (or was cancelled): its permit is about to be returned,
    /// and its voucher lapses if nobody took it.
    #[cold]
    pub(crate) fn ended(&self) {
        let _ = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let (held, vouchers) = split(word);
                Some(join(held.saturating_sub(1), vouchers))
            });
    }

    /// Permits held by calls counted slow, now.
    pub(crate) fn held(&self) -> usize {
        split(self.word.load(Ordering::Acquire)).0 as usize
    }

    /// A waiter was turned away: takes a voucher if every one of `permits` is held by a
    /// slow call and one is left. `true`: the breaker may count this waiter.
    pub(crate) fn claim(&self, permits: usize) -> bool {
        self.word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let (held, vouchers) = split(word);
                (held >= permits as u64 && vouchers > 0).then(|| join(held, vouchers - 1))
            })
            .is_ok()
    }
}

#[cfg(all(test, outbound_guard_loom))]
mod loom_tests;
