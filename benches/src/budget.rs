//! The budget harness's shared pieces (`benches/budget.sh`, `examples/budget_*.rs`,
//! `examples/contention.rs`): the hand-written stack a user would write instead of the
//! guard, and the loops every subject runs, so that each subject's loop differs from the
//! empty loop (the call alone) only by what it measures.

use std::hint::black_box;
use std::time::Duration;

use tokio::sync::{Semaphore, TryAcquireError};
use tokio::time::Instant;

use crate::call::{op_async, Mix};

/// The guide's bulkhead size with the default `max_connections` (10 × 0.8).
pub const PERMITS: usize = 8;
/// The guide's default `total_timeout`.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
/// The guide's default `cb_slow_threshold`.
pub const SLOW_THRESHOLD: Duration = Duration::from_secs(15);
/// The guide's default `bulkhead_wait`.
pub const BULKHEAD_WAIT: Duration = Duration::from_secs(2);

/// What the hand-written stack returns when it turns a call away or cuts it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No permit within [`BULKHEAD_WAIT`].
    Full,
    /// Cut off at [`TOTAL_TIMEOUT`].
    Timeout,
}

/// What a user writes instead of the guard: a fair tokio `Semaphore` as the bulkhead
/// (waiting at most [`BULKHEAD_WAIT`] when it is full), `tokio::time::timeout` around the
/// call, and an elapsed check counting slow calls. No breaker: `slow` is what a breaker
/// would be told. Three clock reads on the uncontended path (the start, the timeout's
/// deadline, the elapsed check).
///
/// # Errors
///
/// [`Refused`] when no permit came in time or the call was cut off.
#[inline]
pub async fn hand_written<T, E>(
    semaphore: &Semaphore,
    call: impl std::future::Future<Output = Result<T, E>>,
) -> Result<(Result<T, E>, bool), Refused> {
    let _permit = match semaphore.try_acquire() {
        Ok(permit) => permit,
        Err(TryAcquireError::NoPermits) => {
            match tokio::time::timeout(BULKHEAD_WAIT, semaphore.acquire()).await {
                Ok(Ok(permit)) => permit,
                _ => return Err(Refused::Full),
            }
        }
        Err(TryAcquireError::Closed) => return Err(Refused::Full),
    };
    let start = Instant::now();
    let result = tokio::time::timeout(TOTAL_TIMEOUT, call)
        .await
        .map_err(|_| Refused::Timeout)?;
    let slow = start.elapsed() > SLOW_THRESHOLD;
    Ok((result, black_box(slow)))
}

/// The empty loop of the async subjects: `n` awaits of the call alone, summing its
/// values, on the caller's runtime.
pub async fn empty_async(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(v) = op_async(Mix::AllOk, black_box(i)).await {
            sum += v;
        }
    }
    sum
}

/// The empty loop of the breaker alone: `n` calls of the call alone, summing.
pub fn empty_sync(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(v) = crate::call::op(Mix::AllOk, black_box(i)) {
            sum += v;
        }
    }
    sum
}

/// The subject and the number of calls from the command line: `<subject> <calls>`.
///
/// # Panics
///
/// If `<calls>` is given and is not a number.
pub fn args(default: &str) -> (String, u64) {
    let mut args = std::env::args().skip(1);
    let subject = args.next().unwrap_or_else(|| default.to_owned());
    let n = args.next().map_or(1000, |n| n.parse().expect("a count"));
    (subject, n)
}
