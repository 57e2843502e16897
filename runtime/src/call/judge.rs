//! [`Judge`]: how a call's output is judged, and [`CallOptions`]' judgement (the
//! attribute's, [`Guard::call`](crate::Guard::call)'s).

use tokio::time::Instant;

use super::options::CallOptions;
use super::running::RunningCall;
use crate::error::CircuitBreakerError;
use crate::verdict::Verdict;

/// How a [`GuardedCall`](super::GuardedCall) judges its call's output `T`: the
/// [`Verdict`] the breaker counts, and what the call returns. [`CallOptions`] is the
/// attribute's and [`Guard::call`](crate::Guard::call)'s; the tower and tonic layers each
/// have theirs.
///
/// The judge receives the [`RunningCall`] with the output: it either
/// [`finish`](RunningCall::finish)es it with its verdict now, or, when the verdict comes
/// later (a gRPC call, judged by the trailers at the end of its body), hands it on with
/// what it returns, to be finished there. Reading the answer inside
/// [`RunningCall::poll_call`] counts a panic in it as a failure.
pub trait Judge<T> {
    /// What the call returns once judged.
    type Output;

    /// Judges `output`, the call's own, and finishes `call` (or hands it on).
    ///
    /// # Errors
    ///
    /// The guard's error instead of the output: [`Cause::Slow`](crate::Cause::Slow) for
    /// a judge that returns slow calls as errors.
    fn judge(&mut self, output: T, call: RunningCall) -> Result<Self::Output, CircuitBreakerError>;
}

/// A call slower than `cb_slow_threshold` counts as a failure, and so does an `Err`
/// that `failure_if` counts, with the retry hint `retry_after` reads from it.
impl<T, E> Judge<Result<T, E>> for CallOptions<E> {
    type Output = Result<T, E>;

    #[inline]
    fn judge(
        &mut self,
        result: Result<T, E>,
        mut call: RunningCall,
    ) -> Result<Result<T, E>, CircuitBreakerError> {
        let end = Instant::now();
        let verdict = match &result {
            Ok(_) => Verdict::SUCCESS,
            Err(err) => judge_error(&mut call, err, *self),
        };
        match call.end(verdict, end) {
            Err(slow) if self.slow_as_error && result.is_ok() => Err(slow),
            _ => Ok(result),
        }
    }
}

/// The verdict on the call's `Err`: `failure_if` and `retry_after` read it inside the
/// call's span (a classifier that panics counts as a failure, then unwinds on).
#[inline]
fn judge_error<E>(call: &mut RunningCall, err: &E, options: CallOptions<E>) -> Verdict {
    let failed = match options.failure_if {
        None => true,
        Some(is_failure) => call.poll_call(|| is_failure(err)),
    };
    match options.retry_after {
        Some(retry_after) if failed => {
            Verdict::FAILURE.retry_after(call.poll_call(|| retry_after(err)))
        }
        _ => Verdict::new(failed),
    }
}
