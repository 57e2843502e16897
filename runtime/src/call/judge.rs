//! The elapsed check: how a call that ended in time is judged, and its outcome recorded.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Duration;

use tokio::time::Instant;

use super::options::CallOptions;
use super::permit::Permit;
use crate::error::{Cause, CircuitBreakerError};
use crate::observer::Outcome;

/// Judges a call that ended at `end` with `result` by `options`, records the outcome
/// and gives the permits back. A call slower than `cb_slow_threshold` counts as a
/// failure, and so does an `Err` that `failure_if` counts. Generic over the call's
/// output alone; the rest is [`record`].
///
/// # Errors
///
/// [`Cause::Slow`] for a slow `Ok` under `slow_as_error`; the call's own error is the
/// inner `Err`.
#[inline]
pub(super) fn judge<T, E>(
    permit: Permit,
    result: Result<T, E>,
    end: Instant,
    options: CallOptions<E>,
) -> Result<Result<T, E>, CircuitBreakerError> {
    let failed = match (&result, options.failure_if) {
        (Ok(_), _) => false,
        (Err(_), None) => true,
        // A panicking classifier is a failure, like a panicking call, then unwinds.
        (Err(err), Some(is_failure)) => match catch_unwind(AssertUnwindSafe(|| is_failure(err))) {
            Ok(failed) => failed,
            Err(panic) => {
                classifier_panicked(permit, end);
                resume_unwind(panic);
            }
        },
    };
    let hint = match (&result, options.retry_after) {
        (Err(err), Some(retry_after)) if failed => {
            match catch_unwind(AssertUnwindSafe(|| retry_after(err))) {
                Ok(hint) => hint,
                Err(panic) => {
                    classifier_panicked(permit, end);
                    resume_unwind(panic);
                }
            }
        }
        _ => None,
    };
    record_hinted(
        permit,
        failed,
        result.is_ok(),
        end,
        options.slow_as_error,
        hint,
    )?;
    Ok(result)
}

/// The classifier panicked: the call is recorded as a failure and its permits go back
/// before the panic unwinds on.
#[cold]
fn classifier_panicked(mut permit: Permit, end: Instant) {
    let elapsed = permit.elapsed(end);
    permit.report_end(true, Outcome::Failure, elapsed, end);
}

/// The elapsed check of a call that ended in time (`failed` when its error counts, `ok`
/// when it returned `Ok`), and its outcome recorded; the permits go back as `permit` is
/// dropped. Not generic: compiled once (inlined in optimised builds, as the steps
/// around the call are).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn record(
    permit: Permit,
    failed: bool,
    ok: bool,
    end: Instant,
    slow_as_error: bool,
) -> Result<(), CircuitBreakerError> {
    record_hinted(permit, failed, ok, end, slow_as_error, None)
}

/// [`record`], with the upstream's retry hint a failure carries.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn record_hinted(
    mut permit: Permit,
    failed: bool,
    ok: bool,
    end: Instant,
    slow_as_error: bool,
    retry_after: Option<Duration>,
) -> Result<(), CircuitBreakerError> {
    let threshold = permit.guard().slow_threshold();
    let elapsed = permit.elapsed(end);
    // Already counted as slow while running: report it as the breaker counted it, even
    // if the clock read at its end lands on the threshold itself.
    let slow = elapsed > threshold || permit.counted_slow();
    let outcome = match (failed, slow) {
        (true, _) => Outcome::Failure,
        (false, true) => Outcome::Slow,
        (false, false) => Outcome::Success,
    };
    let refused = (slow && slow_as_error && ok).then(|| {
        CircuitBreakerError::new(
            permit.guard().breaker().name_arc(),
            Cause::Slow { elapsed, threshold },
        )
    });
    permit.report_end_hinted(failed || slow, outcome, elapsed, end, retry_after);
    drop(permit);
    refused.map_or(Ok(()), Err)
}
