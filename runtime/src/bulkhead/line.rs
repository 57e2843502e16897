//! The waiters' line of the bulkhead: where callers that found no free permit wait in
//! arrival order, and where permits go while anyone is counted waiting. The bulkhead's
//! protocol is written against [`Line`]; tokio's fair `Semaphore` is the line in a
//! service, and the loom model checks put a line of loom's primitives in its place
//! (`model_line.rs`), since tokio's semaphore cannot run under loom.

use std::future::Future;

use tokio::sync::Semaphore;

/// A fair line of waiters holding permits as counts.
pub(crate) trait Line {
    /// The most permits the line holds.
    const MAX_PERMITS: usize;

    /// A line with no permit and nobody in it.
    fn empty() -> Self;

    /// Hands `n` permits to the waiters in line, oldest first; what nobody waits for
    /// stays in the line.
    fn add(&self, n: usize);

    /// Takes a permit the line holds, for good, if no waiter is owed it.
    fn try_take(&self) -> bool;

    /// Takes back, for good, up to `n` of the permits the line holds that no waiter is
    /// owed; how many it took.
    fn take_back(&self, n: usize) -> usize;

    /// The permits the line holds that no waiter was handed.
    fn held(&self) -> usize;

    /// Waits in line for a permit, taken for good when ready. Cancel-safe: dropped, it
    /// leaves the line and hands a permit it was being given on to the next waiter (or
    /// keeps it in the line when nobody waits).
    fn wait(&self) -> impl Future<Output = ()> + Send + '_;
}

impl Line for Semaphore {
    const MAX_PERMITS: usize = Semaphore::MAX_PERMITS;

    fn empty() -> Self {
        Semaphore::new(0)
    }

    fn add(&self, n: usize) {
        self.add_permits(n);
    }

    fn try_take(&self) -> bool {
        // tokio's `try_acquire` fails while any waiter is owed a permit: fair.
        self.try_acquire()
            .map(tokio::sync::SemaphorePermit::forget)
            .is_ok()
    }

    fn take_back(&self, n: usize) -> usize {
        self.forget_permits(n)
    }

    fn held(&self) -> usize {
        self.available_permits()
    }

    async fn wait(&self) {
        // `acquire` fails only on a closed semaphore; the bulkhead never closes it, so
        // the wait never ends that way (were it closed, it would wait on for good, and
        // the bulkhead's deadline would end it).
        match self.acquire().await {
            Ok(permit) => permit.forget(),
            Err(_) => std::future::pending().await,
        }
    }
}
