//! [`SystemMetrics`]: one system's metric handles, and the observer that counts its
//! breaker's transitions and its guard's calls. The guard's own hooks (bulkhead, failure
//! rate) reach the same handles through `GuardMetrics`, in the parent module.

use std::sync::atomic::{AtomicU8, Ordering};

use ::metrics::{Counter, Gauge, Histogram};
use outbound_guard_settings::SystemSettings;

use super::names::{
    BULKHEAD_IN_USE, BULKHEAD_LIMIT, BULKHEAD_PERMITS, CALLS_TOTAL, CALL_DURATION_SECONDS,
    FAILURE_RATE, OBSERVING, OPEN_PERIOD_SECONDS, REJECTIONS_TOTAL, RETRY_HINTS_TOTAL, STATE,
    TRANSITIONS_TOTAL, WOULD_REJECT_TOTAL,
};
use crate::error::Cause;
use crate::observer::{CallEvent, Observer, Outcome, Transition};
use crate::state::State;

/// Every `outcome` label value, in [`outcome_index`] order.
const OUTCOMES: [&str; 6] = [
    "success",
    "failure",
    "slow",
    "timeout",
    "rejected",
    "cancelled",
];
/// Every rejection `reason` label value, in [`rejection_index`] order.
const REJECTIONS: [&str; 4] = ["open", "half_open_full", "forced_open", "bulkhead_full"];
fn outcome_index(outcome: Outcome) -> usize {
    match outcome {
        Outcome::Success => 0,
        Outcome::Failure => 1,
        Outcome::Slow => 2,
        Outcome::Timeout => 3,
        Outcome::Rejected(_) => 4,
        Outcome::Cancelled => 5,
    }
}

fn rejection_index(cause: &Cause) -> Option<usize> {
    match cause {
        Cause::Open { .. } => Some(0),
        Cause::HalfOpenFull { .. } => Some(1),
        Cause::ForcedOpen => Some(2),
        Cause::BulkheadFull { .. } => Some(3),
        Cause::Timeout { .. } | Cause::Slow { .. } | Cause::WrongGuard { .. } => None,
    }
}

/// Whether the breaker can go from `from` to `to`: its own four transitions, and an
/// operator's force open, disable and reset, each from any other state (an action that
/// finds the breaker in its target state is no transition).
fn possible(from: State, to: State) -> bool {
    match to {
        State::Closed | State::ForcedOpen | State::Disabled => from != to,
        State::Open => matches!(from, State::Closed | State::HalfOpen),
        State::HalfOpen => from == State::Open,
    }
}

/// One system's metric handles, registered at startup. Observes its breaker's
/// transitions and its guard's calls; the guard also reports the bulkhead and the
/// failure rate to it, through
/// [`GuardMetrics`](super::GuardMetrics).
pub(super) struct SystemMetrics {
    pub(super) system: String,
    calls: [Counter; OUTCOMES.len()],
    rejections: [Counter; REJECTIONS.len()],
    state: [Gauge; State::ALL.len()],
    /// The state the `state` gauges show, as its index.
    shown: AtomicU8,
    pub(super) failure_rate: Gauge,
    duration: Histogram,
    pub(super) in_use: Gauge,
    pub(super) limit: Gauge,
    /// `[from][to]`; registered for every possible transition, noop otherwise.
    transitions: [[Counter; State::ALL.len()]; State::ALL.len()],
    open_period: Gauge,
    retry_hints: Counter,
    observing: Gauge,
    /// `[open, half_open_full]`: calls an observing breaker would have refused.
    would_reject: [Counter; 2],
}

impl std::fmt::Debug for SystemMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemMetrics")
            .field("system", &self.system)
            .finish_non_exhaustive()
    }
}

impl SystemMetrics {
    /// Registers every series of `settings`' system with the current recorder, at its
    /// initial value: counters at 0, the state `closed`, the bulkhead empty.
    pub(super) fn register(settings: &SystemSettings) -> SystemMetrics {
        let system = settings.name().to_owned();
        let label = || system.clone();
        let calls = OUTCOMES.map(
            |outcome| ::metrics::counter!(CALLS_TOTAL, "system" => label(), "outcome" => outcome),
        );
        let rejections = REJECTIONS.map(
            |reason| ::metrics::counter!(REJECTIONS_TOTAL, "system" => label(), "reason" => reason),
        );
        let state = State::ALL
            .map(|state| ::metrics::gauge!(STATE, "system" => label(), "state" => state.as_str()));
        let transitions = State::ALL.map(|from| {
            State::ALL.map(|to| {
                if possible(from, to) {
                    ::metrics::counter!(
                        TRANSITIONS_TOTAL,
                        "system" => label(),
                        "from" => from.as_str(),
                        "to" => to.as_str()
                    )
                } else {
                    Counter::noop()
                }
            })
        });
        let failure_rate = ::metrics::gauge!(FAILURE_RATE, "system" => label());
        let duration = ::metrics::histogram!(CALL_DURATION_SECONDS, "system" => label());
        let in_use = ::metrics::gauge!(BULKHEAD_IN_USE, "system" => label());
        let permits = ::metrics::gauge!(BULKHEAD_PERMITS, "system" => label());
        let limit = ::metrics::gauge!(BULKHEAD_LIMIT, "system" => label());
        let open_period = ::metrics::gauge!(OPEN_PERIOD_SECONDS, "system" => label());
        let retry_hints = ::metrics::counter!(RETRY_HINTS_TOTAL, "system" => label());
        let observing = ::metrics::gauge!(OBSERVING, "system" => label());
        observing.set(0.0);
        let would_reject = ["open", "half_open_full"].map(|reason| {
            ::metrics::counter!(WOULD_REJECT_TOTAL, "system" => label(), "reason" => reason)
        });
        for counter in &would_reject {
            counter.increment(0);
        }
        open_period.set(0.0);
        retry_hints.increment(0);

        // Initial values, so that every series exists before the first call. Counters are
        // only touched (+0): a second set of guards in the same process must not reset them.
        for counter in calls
            .iter()
            .chain(&rejections)
            .chain(transitions.iter().flatten())
        {
            counter.increment(0);
        }
        for (i, gauge) in state.iter().enumerate() {
            gauge.set(if i == State::Closed.index() { 1.0 } else { 0.0 });
        }
        failure_rate.set(0.0);
        in_use.set(0.0);
        permits.set(settings.bulkhead_permits() as f64);
        limit.set(crate::bulkhead::Limiter::first_limit(settings) as f64);

        SystemMetrics {
            system,
            calls,
            rejections,
            state,
            shown: AtomicU8::new(State::Closed.index() as u8),
            failure_rate,
            duration,
            in_use,
            limit,
            transitions,
            open_period,
            retry_hints,
            observing,
            would_reject,
        }
    }

    /// Shows `state` in the state gauges, unless they show it already.
    fn show(&self, state: State) {
        let index = state.index();
        // Read first: the common case (no change) then writes nothing, so threads
        // recording calls do not bounce this line between them.
        if self.shown.load(Ordering::Relaxed) as usize == index {
            return;
        }
        let previous = self.shown.swap(index as u8, Ordering::Relaxed) as usize;
        if previous != index {
            // The new state first: a scrape between the two writes sees both states at
            // 1, never none.
            self.state[index].set(1.0);
            self.state[previous].set(0.0);
        }
    }
}

impl Observer for SystemMetrics {
    fn on_transition(&self, t: &Transition<'_>) {
        let counter = &self.transitions[t.from.index()][t.to.index()];
        if possible(t.from, t.to) {
            counter.increment(1);
        } else {
            // Not expected; counted all the same, through the current recorder.
            ::metrics::counter!(
                TRANSITIONS_TOTAL,
                "system" => self.system.clone(),
                "from" => t.from.as_str(),
                "to" => t.to.as_str()
            )
            .increment(1);
        }
        // Every state starts with an empty window; an open one shows the figures
        // that tripped it.
        let rate = match (t.to, t.reason.figures()) {
            (State::Open, Some((failures, calls))) if calls > 0 => {
                f64::from(failures) / f64::from(calls)
            }
            _ => 0.0,
        };
        self.failure_rate.set(rate);
        let open = t.open.filter(|_| t.to == State::Open);
        self.open_period
            .set(open.map_or(0.0, |open| open.length.as_secs_f64()));
        if open.is_some_and(|open| open.retry_hint.is_some()) {
            self.retry_hints.increment(1);
        }
        self.show(t.to);
    }

    fn on_would_refuse(&self, _system: &str, cause: &Cause) {
        match cause {
            Cause::Open { .. } => self.would_reject[0].increment(1),
            Cause::HalfOpenFull { .. } => self.would_reject[1].increment(1),
            _ => {}
        }
    }

    fn on_observing(&self, _system: &str, observing: bool) {
        self.observing.set(if observing { 1.0 } else { 0.0 });
    }

    fn on_call(&self, call: &CallEvent<'_>) {
        self.calls[outcome_index(call.outcome)].increment(1);
        match call.outcome {
            Outcome::Rejected(cause) => {
                if let Some(i) = rejection_index(&cause) {
                    self.rejections[i].increment(1);
                }
            }
            Outcome::Cancelled => {}
            _ => {
                if let Some(elapsed) = call.elapsed {
                    self.duration.record(elapsed.as_secs_f64());
                }
            }
        }
    }
}
