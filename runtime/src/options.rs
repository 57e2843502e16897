//! [`Guard::call_with`]: every step of a guarded call in one, with the attribute's
//! options, for code that does not use the attribute.

use std::future::Future;

use crate::call::Finished;
use crate::guard::Guard;
use crate::guarded::{GuardedCall, Steps};

/// How [`Guard::call_with`] judges a call: the options of `#[circuit_breaker]`
/// (`failure_if`, `slow_as_error`) as values.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{CallOptions, Guard, Settings};
///
/// #[derive(Debug, PartialEq)]
/// enum PortError { Declined, Outage }
///
/// let settings = Settings::parse("[systems.sber]", "inline").unwrap();
/// let guard = Guard::new(settings.system("sber").unwrap());
/// let options = CallOptions::new()
///     .failure_if(|e: &PortError| *e == PortError::Outage)
///     .slow_as_error();
/// let declined = guard
///     .call_with(options, async { Err::<(), _>(PortError::Declined) })
///     .await;
/// assert_eq!(declined.unwrap(), Err(PortError::Declined));
/// // A declined payment is the system answering: it counts as a success.
/// assert_eq!(guard.breaker().snapshot().failures, 0);
/// # }
/// ```
#[derive(Debug)]
#[must_use = "options do nothing until passed to `Guard::call_with`"]
pub struct CallOptions<E> {
    failure_if: Option<fn(&E) -> bool>,
    slow_as_error: bool,
}

impl<E> Clone for CallOptions<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for CallOptions<E> {}

impl<E> Default for CallOptions<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> CallOptions<E> {
    /// Every `Err` counts as a failure; a slow call's value is returned.
    pub const fn new() -> Self {
        CallOptions {
            failure_if: None,
            slow_as_error: false,
        }
    }

    /// [`new`](Self::new), typed by the call it is for: `E` is the error type of
    /// `call`'s output, so a `failure_if` of the wrong type is reported against that
    /// type.
    pub const fn for_call<T, F>(_call: &F) -> Self
    where
        F: Future<Output = Result<T, E>>,
    {
        Self::new()
    }

    /// Counts an `Err` as a failure only when `is_failure` says so; other errors are the
    /// system answering correctly (a declined card), and count as successes. See
    /// [`Finished::failure_if`](crate::Finished::failure_if).
    pub const fn failure_if(mut self, is_failure: fn(&E) -> bool) -> Self {
        self.failure_if = Some(is_failure);
        self
    }

    /// Returns a slow call as [`Cause::Slow`](crate::Cause::Slow) instead of its value.
    /// See [`Finished::slow_as_error`](crate::Finished::slow_as_error).
    pub const fn slow_as_error(mut self) -> Self {
        self.slow_as_error = true;
        self
    }

    /// `finished`, to be judged by these options.
    #[inline]
    pub(crate) fn apply<T>(self, mut finished: Finished<'_, T, E>) -> Finished<'_, T, E> {
        if let Some(is_failure) = self.failure_if {
            finished = finished.failure_if(is_failure);
        }
        if self.slow_as_error {
            finished = finished.slow_as_error();
        }
        finished
    }
}

impl Guard {
    /// Every step in one call, judged by `options`: the outer `Err` is the guard's, the
    /// inner `Result` the call's own. [`Guard::call`] with the attribute's options, so
    /// nobody chains the four steps by hand; what the attributes expand to.
    ///
    /// The returned future does nothing until polled; see [`GuardedCall`] for what
    /// dropping it early gives back.
    ///
    /// # Errors
    ///
    /// The future's output is the guard's refusals: those of
    /// [`enter_bulkhead`](Guard::enter_bulkhead),
    /// [`ask_breaker`](crate::BulkheadPermit::ask_breaker) and
    /// [`elapsed_check`](crate::Finished::elapsed_check). The call's own error is the
    /// inner `Err`.
    #[inline]
    pub fn call_with<T, E, F>(&self, options: CallOptions<E>, future: F) -> GuardedCall<'_, F, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        GuardedCall {
            call: future,
            steps: Steps::new(self),
            options,
        }
    }
}
