//! The statuses a gRPC client gets from the guard: its refusals and timeouts, the
//! caller's own deadline, and the service's errors as tonic would make them.

use std::error::Error;
use std::sync::Arc;

use tonic::Status;

use outbound_guard::CircuitBreakerError;

/// The error type gRPC clients box their errors into.
pub(crate) type BoxError = Box<dyn Error + Send + Sync>;

/// The caller's `grpc-timeout` passed: its deadline, not the system's failure.
pub(crate) fn caller_deadline() -> Status {
    Status::deadline_exceeded("the deadline of the request's grpc-timeout passed")
}

/// The guard's refusal or timeout as the status a gRPC client acts on: `Unavailable`
/// (with the time left open as `grpc-retry-pushback-ms`) for a call never started,
/// `DeadlineExceeded` for a call cut at `total_timeout`; the
/// [`CircuitBreakerError`] is the status's `source`.
pub(crate) fn refusal(error: CircuitBreakerError) -> Status {
    let message = error.to_string();
    let mut status = if error.is_rejection() {
        Status::unavailable(message)
    } else {
        Status::deadline_exceeded(message)
    };
    if let Some(after) = error.retry_after() {
        let millis = after.as_millis().to_string();
        let value = millis.parse().expect("digits are ASCII metadata");
        status
            .metadata_mut()
            .insert("grpc-retry-pushback-ms", value);
    }
    status.set_source(Arc::new(error));
    status
}

/// A service's or a body's error as a [`Status`], as tonic would make it, except
/// tonic's own timeout (from the `grpc-timeout` we sent), which is a deadline, not a
/// cancellation.
pub(crate) fn status_of(error: BoxError) -> Status {
    if is_tonic_timeout(&*error) {
        let mut status = Status::deadline_exceeded(error.to_string());
        status.set_source(Arc::from(error));
        return status;
    }
    Status::from_error(error)
}

/// Whether tonic's channel timed the call out: a `tonic::TimeoutExpired` in the chain.
pub(crate) fn is_tonic_timeout(error: &(dyn Error + 'static)) -> bool {
    let mut link = Some(error);
    while let Some(cause) = link {
        if cause.is::<tonic::TimeoutExpired>() {
            return true;
        }
        link = cause.source();
    }
    false
}
