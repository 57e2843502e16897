//! Without the `metrics` feature: the crate-internal API of `metrics.rs`, recording
//! nothing, so that the guard, its calls and the registry read the same either way
//! (tokio's `tokio/src/runtime/metrics/mock.rs`; `CallSpan` in `log.rs` does the same for spans).
//! Chosen once, in `lib.rs`.

use std::sync::Arc;

use outbound_guard_settings::SystemSettings;

use crate::breaker::Breaker;
use crate::observer::Observer;

/// Without the feature there is nothing to register.
pub(crate) const ON_BY_DEFAULT: bool = false;

/// Nothing to describe.
pub(crate) fn describe() {}

/// One guard's metrics: none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardMetrics;

// The same signatures as the real ones, which use `self`.
#[allow(clippy::unused_self)]
impl GuardMetrics {
    pub(crate) const fn none() -> Self {
        GuardMetrics
    }

    pub(crate) fn register(_settings: &SystemSettings) -> Self {
        GuardMetrics
    }

    pub(crate) fn observer(self) -> Option<Arc<dyn Observer>> {
        None
    }

    #[inline(always)]
    pub(crate) fn bulkhead_taken(self) {}

    #[inline(always)]
    pub(crate) fn bulkhead_returned(self) {}

    #[inline(always)]
    pub(crate) fn recorded(self, _breaker: &Breaker) {}
}

/// Nothing to count.
pub(crate) fn settings_reloaded(_ok: bool) {}

#[allow(clippy::unused_self)]
impl GuardMetrics {
    #[inline(always)]
    pub(crate) fn bulkhead_resized(self, _permits: usize) {}

    #[inline(always)]
    pub(crate) fn bulkhead_limit(self, _limit: usize) {}
}
