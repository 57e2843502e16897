//! [`TracingObserver`]: every breaker transition as a `tracing` event, in words. An
//! observer like any other: the core does not call it, it hears of transitions through
//! [`Observer`](crate::Observer).

use crate::observer::{Observer, Transition};
use crate::state::{Reason, State};

/// Logs every transition as a `tracing` event, target `outbound_guard`, with the fields
/// `system`, `from`, `to`, `reason` (`failure_rate`, `open_elapsed`,
/// `trials_succeeded`, `trial_failed`, `manual`), `observing` (`true` in observe mode, absent otherwise: what the
/// breaker would have done) and, for operators' actions, `action`;
/// the message is the [`Transition`]'s display: `sber opened: 16 of 50 calls failed
/// (32% ≥ 30%)`.
///
/// Entering open, forced open or disabled logs at WARN; half-open and closed at INFO.
///
/// [`Guards::new`](crate::Guards::new) installs it for every system; for a lone guard,
/// pass it in: `Guard::builder(settings).observer(Arc::new(TracingObserver)).build()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingObserver;

impl Observer for TracingObserver {
    fn wants_calls(&self) -> bool {
        false // calls have their span, and rejections their DEBUG event
    }

    fn on_transition(&self, t: &Transition<'_>) {
        let system = t.system;
        let from = t.from.as_str();
        let to = t.to.as_str();
        let reason = t.reason.as_str();
        let action = match t.reason {
            Reason::Manual(action) | Reason::Settings(action) => Some(action.as_str()),
            _ => None,
        };
        match t.to {
            State::Open | State::ForcedOpen | State::Disabled => tracing::warn!(
                target: "outbound_guard",
                system,
                from,
                to,
                reason,
                action,
                observing = t.observing.then_some(true),
                "{t}"
            ),
            State::HalfOpen | State::Closed => tracing::info!(
                target: "outbound_guard",
                system,
                from,
                to,
                reason,
                action,
                observing = t.observing.then_some(true),
                "{t}"
            ),
        }
    }
}
