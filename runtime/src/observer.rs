//! The observer hook: every transition, with its reason, and every call's outcome.
//! Logs and metrics are observers; [`notify`] is the one place that calls them.

mod transition;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

pub use self::transition::{OpenPeriod, Transition};
use outbound_guard_settings::SystemSettings;

use crate::error::Cause;
use crate::hooks;

/// How one guarded call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// Finished in time with `Ok`, or with an error the adapter says is not an outage.
    Success,
    /// Finished with an error that counts, or panicked.
    Failure,
    /// Finished, but slower than `cb_slow_threshold`: counted as a failure.
    Slow,
    /// Cut off at `total_timeout`: counted as a failure.
    Timeout,
    /// Never started: the breaker or the bulkhead refused it.
    Rejected(Cause),
    /// The caller dropped it before it finished: not counted, unless it had already run
    /// past its slow threshold (counted as slow then, once).
    Cancelled,
}

impl Outcome {
    /// A short `snake_case` name, for metric labels and logs.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Slow => "slow",
            Outcome::Timeout => "timeout",
            Outcome::Rejected(_) => "rejected",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// One guarded call, reported when it ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallEvent<'a> {
    /// The system: `sber`.
    pub system: &'a str,
    /// How it ended.
    pub outcome: Outcome,
    /// How long the call itself ran; `None` if it never started.
    pub elapsed: Option<Duration>,
}

/// Receives a breaker's transitions and a guard's call outcomes.
///
/// Called on a caller's thread, after the breaker's lock is released: keep it quick and
/// never block. Both methods default to doing nothing.
///
/// Transitions arrive one at a time and in the order they happened, whichever threads
/// made them: a transition made while another thread is delivering is delivered by that
/// thread, right after. An observer may act on its breaker from
/// [`on_transition`](Self::on_transition) (force it open, reset it): that transition is
/// delivered next, to every observer.
///
/// A panic in an observer is contained: it is printed by the panic hook and logged (an
/// ERROR event naming the system, feature `tracing`), and the breaker, the call and the
/// other observers go on as if the observer had returned. It cannot leak a permit or a
/// trial slot, nor stop the breaker.
pub trait Observer: Send + Sync + 'static {
    /// A breaker changed state.
    fn on_transition(&self, transition: &Transition<'_>) {
        let _ = transition;
    }

    /// A guarded call ended.
    fn on_call(&self, call: &CallEvent<'_>) {
        let _ = call;
    }

    /// A breaker's observe mode was turned on or off (`cb_mode = "observe"` at startup
    /// or by a reload, or an operator's [`ManualAction::Observe`](crate::ManualAction::Observe)
    /// and [`Enforce`](crate::ManualAction::Enforce)).
    fn on_observing(&self, system: &str, observing: bool) {
        let _ = (system, observing);
    }

    /// In observe mode, the breaker admitted a call it would have refused for `cause`
    /// ([`Cause::Open`] or [`Cause::HalfOpenFull`]): the call runs, uncounted. Called
    /// before the call starts, only while observing.
    fn on_would_refuse(&self, system: &str, cause: &Cause) {
        let _ = (system, cause);
    }

    /// A guard's settings, when it is built and when a reload applies new ones: the
    /// limits its calls run under from now on (a recorder writes them, so that a
    /// replay knows how long each recorded call was allowed).
    fn on_settings(&self, settings: &SystemSettings) {
        let _ = settings;
    }

    /// An adaptive bulkhead's limit: how many calls it admits from now on. Called when
    /// the guard is built, on each reload and on each change of the limit (steps of one
    /// included), on the thread of the call whose end moved it; on a reload that turns
    /// the bulkhead fixed, with its permits. Never called for a bulkhead that stays
    /// fixed. A recorder writes it, so that a recording shows what the limit was.
    fn on_bulkhead_limit(&self, system: &str, limit: usize) {
        let _ = (system, limit);
    }

    /// Whether [`on_call`](Self::on_call) does anything. An observer of transitions
    /// only returns `false`, and the per-call path then skips it. Asked once, when the
    /// breaker is built.
    fn wants_calls(&self) -> bool {
        true
    }
}

/// Calls `hook` (named `name` in the log) on each of `system`'s `observers`, in order.
/// The one place observers are called, and so the one place their panics are contained:
/// a panic is logged ([`hooks::observer_panicked`]) and the other observers, the
/// breaker and the call go on. It may run in a drop, even while unwinding, where a
/// second panic would abort.
pub(crate) fn notify(
    observers: &[Arc<dyn Observer>],
    system: &str,
    name: &'static str,
    hook: impl Fn(&dyn Observer),
) {
    for observer in observers {
        if catch_unwind(AssertUnwindSafe(|| hook(&**observer))).is_err() {
            hooks::observer_panicked(system, name);
        }
    }
}
