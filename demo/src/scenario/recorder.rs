//! The scenario's observer: counts every guarded call by outcome (in all, and by the
//! scenario phase the call started in), keeps every transition with its reason, and
//! prints each transition as it happens.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use outbound_guard::{CallEvent, Observer, Outcome, Reason, State, Transition};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

/// One system's guarded calls, by outcome, since the start.
#[derive(Debug, Default)]
pub struct Counters {
    /// Finished in time, `Ok` or an error that is not an outage.
    pub ok: AtomicU64,
    /// Finished with an error that counts against the breaker.
    pub failed: AtomicU64,
    /// Finished, but slower than `cb_slow_threshold`: counts as a failure.
    pub slow: AtomicU64,
    /// Cut off at `total_timeout` (`Cause::Timeout`).
    pub timeout: AtomicU64,
    /// Refused without running: breaker open, trials taken, bulkhead full.
    pub rejected: AtomicU64,
}

/// A reading of [`Counters`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// See [`Counters::ok`].
    pub ok: u64,
    /// See [`Counters::failed`].
    pub failed: u64,
    /// See [`Counters::slow`].
    pub slow: u64,
    /// See [`Counters::timeout`].
    pub timeout: u64,
    /// See [`Counters::rejected`].
    pub rejected: u64,
}

impl Counts {
    /// Every call that counted against the breaker: failed, slow and timed out.
    pub fn bad(&self) -> u64 {
        self.failed + self.slow + self.timeout
    }

    /// `self - earlier`, field by field.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            ok: self.ok - earlier.ok,
            failed: self.failed - earlier.failed,
            slow: self.slow - earlier.slow,
            timeout: self.timeout - earlier.timeout,
            rejected: self.rejected - earlier.rejected,
        }
    }

    /// Every call, rejected ones included.
    pub fn total(&self) -> u64 {
        self.ok + self.bad() + self.rejected
    }

    /// `self + other`, field by field.
    pub fn plus(&self, other: &Counts) -> Counts {
        Counts {
            ok: self.ok + other.ok,
            failed: self.failed + other.failed,
            slow: self.slow + other.slow,
            timeout: self.timeout + other.timeout,
            rejected: self.rejected + other.rejected,
        }
    }
}

impl Counters {
    /// Reads every counter.
    pub fn read(&self) -> Counts {
        Counts {
            ok: self.ok.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            slow: self.slow.load(Ordering::Relaxed),
            timeout: self.timeout.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
        }
    }
}

/// A transition as the scenario keeps it.
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
    /// The scenario phase it happened in.
    pub phase: usize,
    /// The system's counts at that moment.
    pub counts: Counts,
}

/// Counts calls and keeps transitions; see the module docs.
#[derive(Debug)]
pub struct Recorder {
    start: Instant,
    systems: BTreeMap<String, Counters>,
    transitions: Mutex<Vec<Recorded>>,
    timeouts_seen: AtomicU64,
    phase: AtomicUsize,
    /// When each phase began, in order.
    phase_starts: Mutex<Vec<(usize, Instant)>>,
    /// Per system and phase a call started in: its counts.
    by_phase: Mutex<BTreeMap<(String, usize), Counts>>,
    lines: Option<UnboundedSender<String>>,
}

impl Recorder {
    /// A recorder for `systems`; transitions are printed through `lines` if given.
    pub fn new<'a>(
        systems: impl IntoIterator<Item = &'a str>,
        lines: Option<UnboundedSender<String>>,
    ) -> Self {
        Recorder {
            start: Instant::now(),
            systems: systems
                .into_iter()
                .map(|s| (s.to_owned(), Counters::default()))
                .collect(),
            transitions: Mutex::default(),
            timeouts_seen: AtomicU64::new(0),
            phase: AtomicUsize::new(0),
            phase_starts: Mutex::default(),
            by_phase: Mutex::default(),
            lines,
        }
    }

    /// When the recorder was built: time zero of the report.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Sets the phase that later transitions, and calls starting from now on, are
    /// attributed to.
    pub fn set_phase(&self, phase: usize) {
        self.phase.store(phase, Ordering::Relaxed);
        self.phase_starts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((phase, Instant::now()));
    }

    /// The phase that was running at `at`.
    fn phase_at(&self, at: Instant) -> usize {
        let starts = self.phase_starts.lock().unwrap_or_else(|e| e.into_inner());
        starts
            .iter()
            .rev()
            .find(|(_, start)| *start <= at)
            .map_or(0, |(phase, _)| *phase)
    }

    /// One system's counts by the phase each call started in (a refused call started
    /// when it was refused).
    pub fn counts_by_phase(&self, system: &str) -> BTreeMap<usize, Counts> {
        self.by_phase
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|((s, _), _)| s == system)
            .map(|((_, phase), counts)| (*phase, *counts))
            .collect()
    }

    /// One system's counts.
    pub fn counts(&self, system: &str) -> Counts {
        self.systems
            .get(system)
            .map(Counters::read)
            .unwrap_or_default()
    }

    /// Every transition so far.
    pub fn transitions(&self) -> Vec<Recorded> {
        self.transitions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many guarded calls ended in `Cause::Timeout`.
    pub fn timeouts(&self) -> u64 {
        self.timeouts_seen.load(Ordering::Relaxed)
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
                let transitions = self.transitions.lock().unwrap_or_else(|e| e.into_inner());
                let found = transitions
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
        let recorded = Recorded {
            system: t.system.to_owned(),
            from: t.from,
            to: t.to,
            reason: t.reason,
            message: t.to_string(),
            at: t.at,
            phase: self.phase.load(Ordering::Relaxed),
            counts: self.counts(t.system),
        };
        if let Some(lines) = &self.lines {
            let secs = t.at.saturating_duration_since(self.start).as_secs_f64();
            let _ = lines.send(format!("{secs:>6.2}s  ▶ {} → {}: {t}", t.from, t.to));
        }
        self.transitions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(recorded);
    }

    fn on_call(&self, call: &CallEvent<'_>) {
        let Some(counters) = self.systems.get(call.system) else {
            return;
        };
        let counter = match call.outcome {
            Outcome::Success => &counters.ok,
            Outcome::Failure => &counters.failed,
            Outcome::Slow => &counters.slow,
            Outcome::Timeout => {
                self.timeouts_seen.fetch_add(1, Ordering::Relaxed);
                &counters.timeout
            }
            Outcome::Rejected(_) => &counters.rejected,
            _ => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now()
            .checked_sub(call.elapsed.unwrap_or_default())
            .unwrap_or(self.start);
        let phase = self.phase_at(started);
        let mut by_phase = self.by_phase.lock().unwrap_or_else(|e| e.into_inner());
        let counts = by_phase.entry((call.system.to_owned(), phase)).or_default();
        let field = match call.outcome {
            Outcome::Success => &mut counts.ok,
            Outcome::Failure => &mut counts.failed,
            Outcome::Slow => &mut counts.slow,
            Outcome::Timeout => &mut counts.timeout,
            _ => &mut counts.rejected,
        };
        *field += 1;
    }
}
