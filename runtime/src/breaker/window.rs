//! The count-based window: the last `size` outcomes, exactly (R-RES-CB-2). Windows of
//! up to 50 outcomes (the guide uses 50) live in one atomic word; larger ones in a ring
//! under the breaker's lock.

use crate::sync::{AtomicU64, Ordering};

/// A ring of the last `size` outcomes with a running count of failures.
///
/// Old outcomes fall out as new ones arrive; the failure count always equals the number
/// of failures among the outcomes held.
#[derive(Debug)]
pub(crate) struct Window {
    ring: Box<[bool]>,
    next: usize,
    len: usize,
    failures: usize,
}

impl Window {
    pub(crate) fn new(size: usize) -> Self {
        Window {
            ring: vec![false; size.max(1)].into_boxed_slice(),
            next: 0,
            len: 0,
            failures: 0,
        }
    }

    /// Records one outcome, evicting the oldest when the window is full.
    pub(crate) fn push(&mut self, failed: bool) {
        if self.len == self.ring.len() {
            self.failures -= usize::from(self.ring[self.next]);
        } else {
            self.len += 1;
        }
        self.ring[self.next] = failed;
        self.failures += usize::from(failed);
        self.next += 1;
        if self.next == self.ring.len() {
            self.next = 0;
        }
    }

    /// Forgets every outcome.
    pub(crate) fn clear(&mut self) {
        self.next = 0;
        self.len = 0;
        self.failures = 0;
    }

    /// Outcomes held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Failures among the outcomes held.
    pub(crate) fn failures(&self) -> usize {
        self.failures
    }
}

/// The window in one atomic word, for windows of at most [`Packed::MAX`] outcomes: a
/// closed breaker records with one compare-and-swap and no lock.
///
/// Layout: bits `0..50` the outcomes as a shift register (bit 0 the newest, 1 a
/// failure; bits beyond the window's size are always 0), bits `50..56` how many
/// outcomes are held, bits `56..64` the low byte of the generation the window belongs
/// to. A transition resets the word with the new generation's tag, so a push carrying
/// an older generation fails its tag check instead of landing in the new window.
#[derive(Debug)]
pub(crate) struct Packed {
    word: AtomicU64,
    mask: u64,
    size: u64,
}

const COUNT_SHIFT: u32 = 50;
const COUNT_MASK: u64 = 0x3f;
const TAG_SHIFT: u32 = 56;
const TAG_MASK: u64 = !((1 << TAG_SHIFT) - 1);

impl Packed {
    /// The largest window that fits.
    pub(crate) const MAX: u32 = 50;

    pub(crate) fn new(size: u32, generation: u64) -> Option<Self> {
        (1..=Self::MAX).contains(&size).then(|| Packed {
            word: AtomicU64::new(tag(generation)),
            mask: (1u64 << size) - 1,
            size: u64::from(size),
        })
    }

    /// Empties the window for `generation`. A swap, not a store: every change of the
    /// word is then a read-modify-write, ordered with the pushes' compare-and-swaps (the
    /// loom model check found a push landing after a plain-store reset).
    pub(crate) fn reset(&self, generation: u64) {
        self.word.swap(tag(generation), Ordering::AcqRel);
    }

    /// Records an outcome if the window still belongs to `generation`; returns the
    /// failures and outcomes held right after it, or `None` for a stale outcome.
    #[inline]
    pub(crate) fn push(&self, generation: u64, failed: bool) -> Option<(u32, u32)> {
        let tag = tag(generation);
        let mut current = self.word.load(Ordering::Acquire);
        loop {
            if current & TAG_MASK != tag {
                return None;
            }
            let bits = ((current << 1) | u64::from(failed)) & self.mask;
            let count = (((current >> COUNT_SHIFT) & COUNT_MASK) + 1).min(self.size);
            let next = tag | (count << COUNT_SHIFT) | bits;
            if next == current {
                // A success into a full window of successes changes nothing: no write,
                // so threads recording a healthy system only share the line for reading.
                return Some((bits.count_ones(), count as u32));
            }
            match self.word.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some((bits.count_ones(), count as u32)),
                Err(actual) => current = actual,
            }
        }
    }

    /// Failures and outcomes held.
    pub(crate) fn counts(&self) -> (u32, u32) {
        let word = self.word.load(Ordering::Acquire);
        let bits = word & self.mask;
        (
            bits.count_ones(),
            ((word >> COUNT_SHIFT) & COUNT_MASK) as u32,
        )
    }
}

fn tag(generation: u64) -> u64 {
    (generation & 0xff) << TAG_SHIFT
}
