//! An observer that records every guarded call's outcome and every breaker transition:
//! per system and per phase of a run (the phase a call started in), with each
//! transition's reason, the runtime's own message for it and the system's counts at
//! that moment. The suite asserts on it exactly; the demo's scenario reports from it
//! and prints each transition as it happens.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use outbound_guard::{CallEvent, Cause, Observer, Outcome, Reason, State, Transition};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

/// How many calls ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// `Outcome::Success`: finished in time, `Ok` or an error that is not an outage.
    pub success: u64,
    /// `Outcome::Failure`: an error that counts against the breaker, or a panic.
    pub failure: u64,
    /// `Outcome::Slow`: finished, but slower than `cb_slow_threshold`.
    pub slow: u64,
    /// `Outcome::Timeout`: cut off at `total_timeout`.
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

    /// Every call that counted against the breaker: failed, slow and timed out.
    pub fn bad(&self) -> u64 {
        self.failure + self.slow + self.timeout
    }

    /// Every call reported.
    pub fn total(&self) -> u64 {
        self.recorded() + self.rejected() + self.cancelled
    }

    /// `self - earlier`, field by field.
    #[must_use]
    pub fn since(&self, earlier: &Counts) -> Counts {
        self.zip(earlier, |a, b| a - b)
    }

    /// `self + other`, field by field.
    #[must_use]
    pub fn plus(&self, other: &Counts) -> Counts {
        self.zip(other, |a, b| a + b)
    }

    fn zip(&self, other: &Counts, f: impl Fn(u64, u64) -> u64) -> Counts {
        Counts {
            success: f(self.success, other.success),
            failure: f(self.failure, other.failure),
            slow: f(self.slow, other.slow),
            timeout: f(self.timeout, other.timeout),
            rejected_open: f(self.rejected_open, other.rejected_open),
            rejected_half_open: f(self.rejected_half_open, other.rejected_half_open),
            rejected_bulkhead: f(self.rejected_bulkhead, other.rejected_bulkhead),
            rejected_other: f(self.rejected_other, other.rejected_other),
            cancelled: f(self.cancelled, other.cancelled),
        }
    }

    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Success => self.success += 1,
            Outcome::Failure => self.failure += 1,
            Outcome::Slow => self.slow += 1,
            Outcome::Timeout => self.timeout += 1,
            Outcome::Cancelled => self.cancelled += 1,
            Outcome::Rejected(Cause::Open { .. }) => self.rejected_open += 1,
            Outcome::Rejected(Cause::HalfOpenFull { .. }) => self.rejected_half_open += 1,
            Outcome::Rejected(Cause::BulkheadFull { .. }) => self.rejected_bulkhead += 1,
            _ => self.rejected_other += 1,
        }
    }
}

/// A transition as the recorder keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The system.
    pub system: String,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
    /// Why.
    pub reason: Reason,
    /// The runtime's own words for it: `sber opened: 15 of 50 calls failed (30% ≥ 30%)`.
    pub message: String,
    /// When.
    pub at: Instant,
    /// The phase it happened in (see [`Recorder::set_phase`]).
    pub phase: usize,
    /// The system's counts at that moment.
    pub counts: Counts,
}

#[derive(Debug, Default)]
struct Log {
    /// Per system and phase a call started in: its counts.
    by_phase: BTreeMap<(String, usize), Counts>,
    transitions: Vec<Recorded>,
    /// When each phase began, in order.
    phase_starts: Vec<(usize, Instant)>,
}

impl Log {
    fn counts_of(&self, system: &str) -> Counts {
        self.by_phase
            .iter()
            .filter(|((s, _), _)| s == system)
            .fold(Counts::default(), |sum, (_, c)| sum.plus(c))
    }

    /// The phase that was running at `at`.
    fn phase_at(&self, at: Instant) -> usize {
        self.phase_starts
            .iter()
            .rev()
            .find(|(_, start)| *start <= at)
            .map_or(0, |(phase, _)| *phase)
    }
}

/// Records outcomes and transitions of every system it observes; see the module docs.
#[derive(Debug)]
pub struct Recorder {
    start: Instant,
    phase: AtomicUsize,
    log: Mutex<Log>,
    lines: Option<UnboundedSender<String>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new(None)
    }
}

impl Recorder {
    /// A recorder that also sends a line for each transition, as it happens, through
    /// `lines` if given.
    pub fn new(lines: Option<UnboundedSender<String>>) -> Self {
        Recorder {
            start: Instant::now(),
            phase: AtomicUsize::new(0),
            log: Mutex::default(),
            lines,
        }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// When the recorder was built: time zero of a report.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Sets the phase that later transitions, and calls starting from now on, are
    /// attributed to.
    pub fn set_phase(&self, phase: usize) {
        self.phase.store(phase, Ordering::Relaxed);
        self.log().phase_starts.push((phase, Instant::now()));
    }

    /// Every system's counts together.
    pub fn counts(&self) -> Counts {
        self.log()
            .by_phase
            .values()
            .fold(Counts::default(), |sum, c| sum.plus(c))
    }

    /// One system's counts.
    pub fn counts_of(&self, system: &str) -> Counts {
        self.log().counts_of(system)
    }

    /// One system's counts by the phase each call started in (a refused call started
    /// when it was refused).
    pub fn counts_by_phase(&self, system: &str) -> BTreeMap<usize, Counts> {
        self.log()
            .by_phase
            .iter()
            .filter(|((s, _), _)| s == system)
            .map(|((_, phase), counts)| (*phase, *counts))
            .collect()
    }

    /// How many guarded calls of any system ended in `Cause::Timeout`.
    pub fn timeouts(&self) -> u64 {
        self.counts().timeout
    }

    /// Every transition so far, in the order reported.
    pub fn transitions(&self) -> Vec<Recorded> {
        self.log().transitions.clone()
    }

    /// The transitions of one system, as `(from, to)`.
    pub fn transitions_of(&self, system: &str) -> Vec<(State, State)> {
        self.log()
            .transitions
            .iter()
            .filter(|t| t.system == system)
            .map(|t| (t.from, t.to))
            .collect()
    }

    /// Forgets every count and transition recorded.
    pub fn clear(&self) {
        let mut log = self.log();
        log.by_phase.clear();
        log.transitions.clear();
    }

    /// Waits until `system` moves `from` → `to` at or after index `cursor` of the
    /// transition list, at most `timeout`. Returns the transition and the index after it.
    pub async fn wait_for(
        &self,
        system: &str,
        from: State,
        to: State,
        cursor: usize,
        timeout: Duration,
    ) -> Option<(Recorded, usize)> {
        let deadline = Instant::now() + timeout;
        loop {
            {
                let log = self.log();
                let found = log
                    .transitions
                    .iter()
                    .enumerate()
                    .skip(cursor)
                    .find(|(_, t)| t.system == system && t.from == from && t.to == to);
                if let Some((i, t)) = found {
                    return Some((t.clone(), i + 1));
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Observer for Recorder {
    fn on_transition(&self, t: &Transition<'_>) {
        if let Some(lines) = &self.lines {
            let secs = t.at.saturating_duration_since(self.start).as_secs_f64();
            let _ = lines.send(format!("{secs:>6.2}s  ▶ {} → {}: {t}", t.from, t.to));
        }
        let mut log = self.log();
        let recorded = Recorded {
            system: t.system.to_owned(),
            from: t.from,
            to: t.to,
            reason: t.reason,
            message: t.to_string(),
            at: t.at,
            phase: self.phase.load(Ordering::Relaxed),
            counts: log.counts_of(t.system),
        };
        log.transitions.push(recorded);
    }

    fn on_call(&self, call: &CallEvent<'_>) {
        let started = Instant::now()
            .checked_sub(call.elapsed.unwrap_or_default())
            .unwrap_or(self.start);
        let mut log = self.log();
        let phase = log.phase_at(started);
        log.by_phase
            .entry((call.system.to_owned(), phase))
            .or_default()
            .add(&call.outcome);
    }
}
