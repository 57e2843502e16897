//! The hooks the core calls into `tracing` (feature `tracing`; without it each is
//! nothing at all): the span around every admitted call, an event for a refused call,
//! and one for an observer that panicked. Observers (the `TracingObserver`, the
//! metrics, a user's) are not hooks: they hear of transitions and calls through
//! `Observer`.

use crate::error::Cause;

/// The span around one guarded call: `guarded_call{system, outcome}`, at INFO, target
/// `outbound_guard`. Disabled (no allocation, no subscriber call) when nobody wants it.
///
/// One pointer, null while disabled: a `tracing::Span` is 40 bytes, and this value
/// moves with the call's permit through every step, so the span is only boxed (one
/// allocation, next to the subscriber's own work for the span) when a subscriber is
/// interested in it.
#[cfg(feature = "tracing")]
#[derive(Debug)]
pub(crate) struct CallSpan(Option<Box<tracing::Span>>);

#[cfg(feature = "tracing")]
impl CallSpan {
    #[inline]
    pub(crate) fn new(system: &str) -> Self {
        // The callsite's interest is cached: with no subscriber interested this is a
        // load and a compare, and nothing is built.
        let span = tracing::info_span!(
            target: "outbound_guard",
            "guarded_call",
            system,
            outcome = tracing::field::Empty
        );
        if span.is_disabled() {
            CallSpan(None)
        } else {
            Self::boxed(span)
        }
    }

    #[cold]
    fn boxed(span: tracing::Span) -> Self {
        CallSpan(Some(Box::new(span)))
    }

    #[inline]
    pub(crate) fn enter(&self) -> Option<tracing::span::Entered<'_>> {
        self.0.as_deref().map(tracing::Span::enter)
    }

    #[inline]
    pub(crate) fn record(&self, outcome: &'static str) {
        if let Some(span) = &self.0 {
            span.record("outcome", outcome);
        }
    }
}

/// Without the `tracing` feature the span is nothing at all.
#[cfg(not(feature = "tracing"))]
#[derive(Debug)]
pub(crate) struct CallSpan;

/// What entering no span gives.
#[cfg(not(feature = "tracing"))]
pub(crate) struct NotEntered;

// The same signatures as the real ones, which use `self`.
#[cfg(not(feature = "tracing"))]
#[allow(clippy::unused_self)]
impl CallSpan {
    #[inline]
    pub(crate) fn new(_system: &str) -> Self {
        CallSpan
    }

    #[inline]
    pub(crate) fn enter(&self) -> NotEntered {
        NotEntered
    }

    #[inline]
    pub(crate) fn record(&self, _outcome: &'static str) {}
}

/// A DEBUG event for a call the guard refused: the breaker or the bulkhead said no.
#[inline]
pub(crate) fn rejected(system: &str, cause: &Cause) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        target: "outbound_guard",
        system,
        outcome = "rejected",
        reason = cause.as_str(),
        "{system} call rejected: {cause}"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (system, cause);
}

/// An INFO event for a reset that emptied a closed breaker's window: no transition
/// (the state stays closed), but an operator's action worth a line in the log:
/// `sber reset by an operator: window cleared, 4 of 10 had failed`.
#[cold]
/// `who` made the reset: `an operator`, `the settings file`.
pub(crate) fn window_cleared(system: &str, who: &str, failures: u32, calls: u32) {
    #[cfg(feature = "tracing")]
    {
        tracing::info!(
            target: "outbound_guard",
            system,
            reason = "manual",
            action = "reset",
            failures,
            calls,
            "{system} reset by {who}: window cleared, {failures} of {calls} had failed"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (system, who, failures, calls);
}

/// An ERROR event for an observer that panicked: the panic was contained (the panic
/// hook has already printed it), and the breaker and the call went on.
#[cold]
pub(crate) fn observer_panicked(system: &str, hook: &'static str) {
    #[cfg(feature = "tracing")]
    tracing::error!(
        target: "outbound_guard",
        system,
        hook,
        "an observer of {system} panicked in {hook}; the panic was contained and the breaker goes on"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (system, hook);
}

/// A WARN event for an adaptive bulkhead's limit that moved by more than a permit, in
/// words: `sber's limit 8 → 4: latency 2.1× its baseline of 40 ms` (INFO on the way
/// up).
#[cold]
pub(crate) fn limit_changed(system: &str, change: &crate::bulkhead::Change) {
    #[cfg(feature = "tracing")]
    {
        let (from, to) = (change.from, change.to);
        let text = change.describe(system);
        if to < from {
            tracing::warn!(target: "outbound_guard", system, from, to, "{text}");
        } else {
            tracing::info!(target: "outbound_guard", system, from, to, "{text}");
        }
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (system, change);
}
