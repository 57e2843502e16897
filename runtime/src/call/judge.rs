//! [`Judge`]: how a call's output is judged, and [`CallOptions`]' judgement (the
//! attribute's, [`Guard::call`](crate::Guard::call)'s).

use tokio::time::Instant;

use super::options::CallOptions;
use super::running::RunningCall;
use crate::error::CircuitBreakerError;
use crate::verdict::Verdict;

/// How a [`GuardedCall`](super::GuardedCall) judges its call's output `T`: the
/// [`Verdict`] the breaker counts, and what the call returns. The extension point for a
/// client of any kind: [`Guard::call_judged`](crate::Guard::call_judged) runs a call
/// with your judge. [`CallOptions`] is the attribute's and
/// [`Guard::call`](crate::Guard::call)'s judge; the tower and tonic layers each bring
/// theirs through the same door.
///
/// The judge receives the [`RunningCall`] with the output and
/// [`finish`](RunningCall::finish)es it with its verdict: the elapsed check runs, the
/// outcome is counted and reported, and the permits go back. Read the answer inside
/// [`RunningCall::poll_call`]: a judge that panics there counts the call as a failure
/// and unwinds on, and the permits go back all the same. A judge that returns without
/// finishing the call (dropping it) counts it as cancelled: nothing is counted.
///
/// A message producer whose "broker busy" counts against the system, while a message
/// it refuses as too large is the caller's mistake and counts as a success:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{CircuitBreakerError, Guard, Judge, RunningCall, Settings, Verdict};
///
/// #[derive(Debug, PartialEq)]
/// enum SendError {
///     BrokerBusy,
///     TooLarge,
/// }
///
/// /// Counts what the broker's state causes, not what the message does.
/// struct Producer;
///
/// impl Judge<Result<u64, SendError>> for Producer {
///     type Output = Result<u64, SendError>;
///
///     fn judge(
///         &mut self,
///         sent: Result<u64, SendError>,
///         mut call: RunningCall,
///     ) -> Result<Self::Output, CircuitBreakerError> {
///         let failed = call.poll_call(|| matches!(sent, Err(SendError::BrokerBusy)));
///         // `Err(Cause::Slow)` here is for a judge that returns slow calls as errors;
///         // this one returns the broker's answer either way.
///         let _ = call.finish(Verdict::new(failed));
///         Ok(sent)
///     }
/// }
///
/// let settings = Settings::parse("[systems.kafka]", "inline").unwrap();
/// let guard = Guard::new(settings.system("kafka").unwrap());
/// let sent = guard.call_judged(Producer, async { Err::<u64, _>(SendError::TooLarge) });
/// assert_eq!(sent.await.unwrap(), Err(SendError::TooLarge));
/// assert_eq!(guard.breaker().snapshot().failures, 0);
/// # }
/// ```
pub trait Judge<T> {
    /// What the call returns once judged.
    type Output;

    /// Judges `output`, the call's own, and finishes `call` with the verdict.
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
