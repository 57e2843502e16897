//! The count-based window: the last `size` outcomes, exactly (R-RES-CB-2), in a ring
//! kept under the breaker's lock, whatever its size.

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

    /// The outcomes held, oldest first.
    pub(crate) fn outcomes(&self) -> Vec<bool> {
        let size = self.ring.len();
        // `next` is the slot after the newest; `len ≤ size`, so this never underflows.
        let start = self.next + size - self.len;
        (0..self.len)
            .map(|i| self.ring[(start + i) % size])
            .collect()
    }

    /// A window of `size` holding this one's newest outcomes, as many as fit.
    pub(crate) fn resized(&self, size: usize) -> Window {
        let mut window = Window::new(size);
        let outcomes = self.outcomes();
        let keep = outcomes.len().min(window.ring.len());
        for &failed in &outcomes[outcomes.len() - keep..] {
            window.push(failed);
        }
        window
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
