//! An observer that records every call's outcome and every breaker transition.

use std::sync::{Mutex, MutexGuard};

use outbound_guard::{CallEvent, Cause, Observer, Outcome, State, Transition};

/// How many calls ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// `Outcome::Success`.
    pub success: u64,
    /// `Outcome::Failure` (an error that counts, or a panic).
    pub failure: u64,
    /// `Outcome::Slow`.
    pub slow: u64,
    /// `Outcome::Timeout`.
    pub timeout: u64,
    /// Rejected because the breaker was open.
    pub rejected_open: u64,
    /// Rejected because half-open's trials were taken.
    pub rejected_half_open: u64,
    /// Rejected because the bulkhead stayed full.
    pub rejected_bulkhead: u64,
    /// Rejected for another reason (forced open).
    pub rejected_other: u64,
    /// `Outcome::Cancelled`.
    pub cancelled: u64,
}

impl Counts {
    /// Every rejection.
    pub fn rejected(&self) -> u64 {
        self.rejected_open + self.rejected_half_open + self.rejected_bulkhead + self.rejected_other
    }

    /// Calls that ran and were recorded (success, failure, slow, timeout).
    pub fn recorded(&self) -> u64 {
        self.success + self.failure + self.slow + self.timeout
    }

    /// Every call reported.
    pub fn total(&self) -> u64 {
        self.recorded() + self.rejected() + self.cancelled
    }
}

#[derive(Debug, Default)]
struct Log {
    counts: Counts,
    transitions: Vec<(String, State, State)>,
}

/// Records outcomes and transitions of every system it observes.
#[derive(Debug, Default)]
pub struct Recorder {
    log: Mutex<Log>,
}

impl Recorder {
    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        self.log().counts
    }

    /// Every transition so far, in the order reported: `(system, from, to)`.
    pub fn transitions(&self) -> Vec<(String, State, State)> {
        self.log().transitions.clone()
    }

    /// The transitions of one system, as `(from, to)`.
    pub fn transitions_of(&self, system: &str) -> Vec<(State, State)> {
        self.log()
            .transitions
            .iter()
            .filter(|(s, _, _)| s == system)
            .map(|(_, from, to)| (*from, *to))
            .collect()
    }

    /// Forgets everything recorded.
    pub fn clear(&self) {
        *self.log() = Log::default();
    }
}

impl Observer for Recorder {
    fn on_transition(&self, transition: &Transition<'_>) {
        self.log()
            .transitions
            .push((transition.system.to_owned(), transition.from, transition.to));
    }

    fn on_call(&self, call: &CallEvent<'_>) {
        let mut log = self.log();
        let c = &mut log.counts;
        match call.outcome {
            Outcome::Success => c.success += 1,
            Outcome::Failure => c.failure += 1,
            Outcome::Slow => c.slow += 1,
            Outcome::Timeout => c.timeout += 1,
            Outcome::Cancelled => c.cancelled += 1,
            Outcome::Rejected(Cause::Open { .. }) => c.rejected_open += 1,
            Outcome::Rejected(Cause::HalfOpenFull { .. }) => c.rejected_half_open += 1,
            Outcome::Rejected(Cause::BulkheadFull { .. }) => c.rejected_bulkhead += 1,
            Outcome::Rejected(_) => c.rejected_other += 1,
            _ => c.rejected_other += 1,
        }
    }
}
