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

#[cfg(test)]
mod tests {
    use super::Window;

    /// A window of `size` after `outcomes`, pushed in order.
    fn after(size: usize, outcomes: &[bool]) -> Window {
        let mut window = Window::new(size);
        for &failed in outcomes {
            window.push(failed);
        }
        window
    }

    #[test]
    fn it_holds_the_last_size_outcomes_oldest_first_across_the_rings_wrap() {
        let (t, f) = (true, false);
        assert_eq!(after(4, &[]).outcomes(), Vec::<bool>::new());
        assert_eq!(after(4, &[t, f, f]).outcomes(), [t, f, f]);
        // Seven into four: the ring has wrapped, `next` is mid-ring.
        let window = after(4, &[t, t, f, t, f, f, t]);
        assert_eq!(window.outcomes(), [t, f, f, t]);
        assert_eq!((window.len(), window.failures()), (4, 2));
    }

    #[test]
    fn a_resize_keeps_the_newest_outcomes_that_fit() {
        let (t, f) = (true, false);
        let window = after(4, &[t, t, f, t, f, f, t]); // holds t f f t
        let smaller = window.resized(3);
        assert_eq!(smaller.outcomes(), [f, f, t]);
        assert_eq!((smaller.len(), smaller.failures()), (3, 1));
        let larger = window.resized(6);
        assert_eq!(larger.outcomes(), [t, f, f, t]);
        assert_eq!((larger.len(), larger.failures()), (4, 2));
        // And it goes on as a window of its size.
        let mut larger = larger;
        larger.push(t);
        larger.push(t);
        larger.push(f);
        assert_eq!(larger.outcomes(), [f, f, t, t, t, f]);
    }
}
