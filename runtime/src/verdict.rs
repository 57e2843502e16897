//! [`Verdict`]: what a call's outcome means to its breaker, as one value.

use std::time::Duration;

/// What a call's outcome means to its breaker: whether it failed, and the upstream's
/// retry hint a failure carried. Made by whoever reads the call's answer (a client
/// layer's judge, the code holding a [`BreakerPermit`](crate::BreakerPermit)) and read by
/// the breaker alone. One value from the judge that reads the answer to the
/// breaker that counts it; a new signal from the upstream is a new field here, not a
/// second method at every step.
///
/// ```
/// use std::time::Duration;
/// use outbound_guard::Verdict;
///
/// let failed = true; // as the judge read the answer
/// let busy = Verdict::new(failed).retry_after(Some(Duration::from_secs(30)));
/// assert_ne!(busy, Verdict::FAILURE, "a failure with the upstream's hint");
/// // A success carries no hint: the upstream answered.
/// assert_eq!(Verdict::SUCCESS.retry_after(Some(Duration::from_secs(30))), Verdict::SUCCESS);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Verdict {
    failed: bool,
    retry_after: Option<Duration>,
}

impl Verdict {
    /// The call succeeded: the system answered (a declined card included).
    pub const SUCCESS: Verdict = Verdict {
        failed: false,
        retry_after: None,
    };

    /// The call failed: it counts against the system.
    pub const FAILURE: Verdict = Verdict {
        failed: true,
        retry_after: None,
    };

    /// A failure when `failed`, a success otherwise.
    #[inline]
    pub const fn new(failed: bool) -> Self {
        Verdict {
            failed,
            retry_after: None,
        }
    }

    /// With the upstream's retry hint (`Retry-After` of a 429 or 503,
    /// `grpc-retry-pushback-ms`): if this failure opens the breaker, or finds it open,
    /// the open period lasts at least `hint` from now, at most `cb_open_max` from its
    /// start. A closed breaker is not opened by a hint alone: the window decides, as for
    /// any failure. A success carries no hint (it is dropped here).
    #[inline]
    #[must_use]
    pub const fn retry_after(mut self, hint: Option<Duration>) -> Self {
        self.retry_after = if self.failed { hint } else { None };
        self
    }

    /// Whether the call counts against the system.
    #[inline]
    pub(crate) const fn is_failure(&self) -> bool {
        self.failed
    }

    /// The upstream's retry hint a failure carried.
    #[inline]
    pub(crate) const fn retry_hint(&self) -> Option<Duration> {
        self.retry_after
    }
}
