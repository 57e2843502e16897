//! [`CallOptions`]: how [`Guard::call_judged`](crate::Guard::call_judged) judges a call.

use std::time::Duration;

/// How [`Guard::call_judged`](crate::Guard::call_judged) judges a call: the options of `#[circuit_breaker]`
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
///     .call_judged(options, async { Err::<(), _>(PortError::Declined) })
///     .await;
/// assert_eq!(declined.unwrap(), Err(PortError::Declined));
/// // A declined payment is the system answering: it counts as a success.
/// assert_eq!(guard.breaker().snapshot().failures, 0);
/// # }
/// ```
#[derive(Debug)]
#[must_use = "options do nothing until passed to `Guard::call_judged`"]
pub struct CallOptions<E> {
    pub(super) failure_if: Option<fn(&E) -> bool>,
    pub(super) slow_as_error: bool,
    pub(super) retry_after: Option<fn(&E) -> Option<Duration>>,
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
            retry_after: None,
        }
    }

    /// Counts an `Err` as a failure only when `is_failure` says so; other errors are the
    /// system answering correctly (a declined card), and count as successes. A
    /// classifier that panics counts the call as a failure, and the panic unwinds on.
    pub const fn failure_if(mut self, is_failure: fn(&E) -> bool) -> Self {
        self.failure_if = Some(is_failure);
        self
    }

    /// Reads the upstream's retry hint from an error that counts as a failure: a port
    /// error holding the `Retry-After` of a 429 or 503, or a gRPC status's
    /// `grpc-retry-pushback-ms`. If that failure opens the breaker, or finds it open,
    /// the open period lasts at least the hint, at most `cb_open_max`; a closed breaker
    /// is not opened by a hint alone (see [`Verdict::retry_after`](crate::Verdict::retry_after)).
    /// A reader that panics counts the call as a failure, and the panic unwinds on.
    ///
    /// ```
    /// use std::time::Duration;
    /// use outbound_guard::CallOptions;
    ///
    /// enum PortError { Busy { retry_after: Option<Duration> }, Down }
    ///
    /// let options = CallOptions::new().retry_after(|e: &PortError| match e {
    ///     PortError::Busy { retry_after } => *retry_after,
    ///     PortError::Down => None,
    /// });
    /// # let _ = options;
    /// ```
    pub const fn retry_after(mut self, hint: fn(&E) -> Option<Duration>) -> Self {
        self.retry_after = Some(hint);
        self
    }

    /// Returns a slow call as [`Cause::Slow`](crate::Cause::Slow) instead of its value
    /// (the guide's literal behaviour). By default a slow call's value is returned and
    /// the slowness only counts against the breaker: a payment that went through is not
    /// reported failed.
    pub const fn slow_as_error(mut self) -> Self {
        self.slow_as_error = true;
        self
    }
}
