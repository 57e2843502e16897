//! A call's outcome told to the observers (and the log, for a refusal).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use crate::error::Cause;
use crate::guard::Guard;
use crate::observer::{CallEvent, Outcome};

/// A call the guard refused: logged, and reported to the observers.
#[cold]
pub(super) fn report_rejection(guard: &Guard, cause: &Cause) {
    crate::log::rejected(guard.system(), cause);
    report(guard, Outcome::Rejected(*cause), None);
}

/// A call's outcome, to every observer that wants calls.
#[inline]
pub(super) fn report(guard: &Guard, outcome: Outcome, elapsed: Option<Duration>) {
    let observers = guard.breaker().call_observers();
    if observers.is_empty() {
        return;
    }
    let event = CallEvent {
        system: guard.system(),
        outcome,
        elapsed,
    };
    for observer in observers {
        // Contained like a transition's observer: this may run in a drop, even while
        // unwinding, where a second panic would abort.
        if catch_unwind(AssertUnwindSafe(|| observer.on_call(&event))).is_err() {
            crate::log::observer_panicked(guard.system(), "on_call");
        }
    }
}
