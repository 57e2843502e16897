//! The elapsed check: how a call that ended in time is judged, and its outcome recorded.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use tokio::time::Instant;

use super::options::CallOptions;
use super::permit::Permit;
use crate::error::{Cause, CircuitBreakerError};
use crate::observer::Outcome;

/// What a judged call returns: the guard's answer, or the panic of a classifier that
/// panicked (recorded as a failure), for the caller to give the permits back and then
/// unwind on.
pub(super) type Judged<T, E> =
    Result<Result<Result<T, E>, CircuitBreakerError>, Box<dyn Any + Send + 'static>>;

/// Judges a call that ended at `end` with `result` by `options` and records the
/// outcome; the caller gives the permits back (drops `permit`) right after. A call
/// slower than `cb_slow_threshold` counts as a failure, and so does an `Err` that
/// `failure_if` counts. Generic over the call's output alone; the rest is [`record`].
///
/// # Errors
///
/// The outer `Err` is a panicking classifier's panic. [`Cause::Slow`] for a slow `Ok`
/// under `slow_as_error`; the call's own error is the inner `Err`.
#[inline]
pub(super) fn judge<T, E>(
    permit: &mut Permit,
    result: Result<T, E>,
    end: Instant,
    options: CallOptions<E>,
) -> Judged<T, E> {
    let failed = match (&result, options.failure_if) {
        (Ok(_), _) => false,
        (Err(_), None) => true,
        // A panicking classifier is a failure, like a panicking call, then unwinds.
        (Err(err), Some(is_failure)) => match catch_unwind(AssertUnwindSafe(|| is_failure(err))) {
            Ok(failed) => failed,
            Err(panic) => {
                classifier_panicked(permit, end);
                return Err(panic);
            }
        },
    };
    // The upstream's retry hint a counted failure carries (`retry_after`); a panicking
    // reader of it counts as a panicking classifier.
    let hint = match (&result, options.retry_after) {
        (Err(err), Some(retry_after)) if failed => {
            match catch_unwind(AssertUnwindSafe(|| retry_after(err))) {
                Ok(hint) => hint,
                Err(panic) => {
                    classifier_panicked(permit, end);
                    return Err(panic);
                }
            }
        }
        _ => None,
    };
    let ok = result.is_ok();
    Ok(record(permit, failed, ok, end, options.slow_as_error, hint).map(|()| result))
}

/// The classifier panicked: the call is recorded as a failure (its permits go back,
/// as the caller drops them, before the panic unwinds on).
#[cold]
fn classifier_panicked(permit: &mut Permit, end: Instant) {
    permit.report_end(true, Outcome::Failure, end);
}

/// The elapsed check of a call that ended in time (`failed` when its error counts, `ok`
/// when it returned `Ok`), and its outcome recorded, with the upstream's retry hint a
/// failure carries. Not generic: compiled once
/// (inlined in optimised builds, as the steps around the call are).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn record(
    permit: &mut Permit,
    failed: bool,
    ok: bool,
    end: Instant,
    slow_as_error: bool,
    retry_after: Option<Duration>,
) -> Result<(), CircuitBreakerError> {
    let threshold = permit.guard().slow_threshold();
    // Already counted as slow while running: report it as the breaker counted it, even
    // if the clock read at its end lands on the threshold itself.
    let slow = permit.ran_longer(end, threshold) || permit.counted_slow();
    let outcome = match (failed, slow) {
        (true, _) => Outcome::Failure,
        (false, true) => Outcome::Slow,
        (false, false) => Outcome::Success,
    };
    let refused = (slow && slow_as_error && ok).then(|| {
        CircuitBreakerError::new(
            permit.guard().breaker().name_arc(),
            Cause::Slow {
                elapsed: permit.elapsed(end),
                threshold,
            },
        )
    });
    permit.report_end_hinted(failed || slow, outcome, end, retry_after);
    refused.map_or(Ok(()), Err)
}
