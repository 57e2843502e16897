//! The breaker's state machine, free of clocks and async: time comes in as nanoseconds
//! since the breaker was built, so the same code runs under tokio's paused clock, in
//! property tests against a reference model, and under loom (the `model-check` crate
//! compiles this file against loom's primitives).
//!
//! Concurrency design: every change of state happens under one short `Mutex` (never held
//! across an `.await`, never held while observers run). The one lock-free read is the
//! admission fast path: a single `Acquire` load of `state` that, while closed, admits
//! the call with no lock at all. `state` packs the state kind with a generation that
//! grows on every transition; each admitted call carries the generation it was admitted
//! in, so an outcome that belongs to an earlier state cannot move the current one.

use std::fmt;

use super::window::{Packed, Window};
use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering};

/// The state of a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Calls flow; outcomes are counted in the window.
    Closed,
    /// Calls are rejected at once until the open duration has passed.
    Open,
    /// A fixed number of trial calls decide between closed and open.
    HalfOpen,
    /// An operator forced it open: every call is rejected until reset.
    ForcedOpen,
    /// An operator disabled it: every call flows and nothing is counted until reset.
    Disabled,
}

impl State {
    /// Every state, in declaration order: `ALL[state.index()] == state`.
    pub(crate) const ALL: [State; 5] = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::Disabled,
    ];

    /// The state's position in [`State::ALL`].
    #[allow(dead_code)] // used by the metrics, which builds without it may leave out
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    fn code(self) -> u64 {
        self as u64
    }

    fn from_code(code: u64) -> State {
        State::ALL[(code & KIND_MASK) as usize]
    }

    /// The state's name in `snake_case`, as metrics and logs print it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::Disabled => "disabled",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operator's action on a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManualAction {
    /// Forced open: every call rejected.
    ForceOpen,
    /// Forced closed: every call admitted, nothing counted.
    Disable,
    /// Back to closed with an empty window.
    Reset,
}

/// Why a breaker changed state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reason {
    /// Closed → open: the window's failure rate reached the threshold.
    FailureRate {
        /// Failures in the window.
        failures: u32,
        /// Outcomes in the window.
        calls: u32,
        /// The configured `cb_failure_rate`.
        threshold: f64,
    },
    /// Open → half-open: the open duration has passed.
    OpenElapsed {
        /// How long it was open, in nanoseconds.
        after_nanos: u64,
    },
    /// Half-open → closed: every trial call succeeded.
    TrialsSucceeded {
        /// The number of trials.
        trials: u32,
    },
    /// Half-open → open: a trial call failed.
    TrialFailed {
        /// Trials that had succeeded before this one failed.
        succeeded: u32,
        /// The number of trials.
        trials: u32,
    },
    /// An operator acted.
    Manual(ManualAction),
}

impl Reason {
    /// The reason's short name, for logs, metric labels and health: `failure_rate`,
    /// `open_elapsed`, `trials_succeeded`, `trial_failed` or `manual`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Reason::FailureRate { .. } => "failure_rate",
            Reason::OpenElapsed { .. } => "open_elapsed",
            Reason::TrialsSucceeded { .. } => "trials_succeeded",
            Reason::TrialFailed { .. } => "trial_failed",
            Reason::Manual(_) => "manual",
        }
    }

    /// The figures behind an opening: `(failures, outcomes)` of the window that reached
    /// the threshold, or of the trials when one failed (`1` of those recorded). `None`
    /// for the other reasons.
    pub fn figures(&self) -> Option<(u32, u32)> {
        match *self {
            Reason::FailureRate {
                failures, calls, ..
            } => Some((failures, calls)),
            Reason::TrialFailed { succeeded, .. } => Some((1, succeeded.saturating_add(1))),
            _ => None,
        }
    }
}

/// A transition as the core reports it; the breaker adds its name and a clock reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    pub from: State,
    pub to: State,
    pub reason: Reason,
    pub at_nanos: u64,
}

/// The breaker's parameters, taken from a system's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    pub window: u32,
    pub min_calls: u32,
    pub failure_rate: f64,
    pub open_nanos: u64,
    pub trials: u32,
}

/// What an admitted call carries until its outcome is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    generation: u64,
    trial: bool,
}

/// Why the core refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Denied {
    Open { remaining_nanos: u64 },
    TrialsTaken { trials: u32 },
    ForcedOpen,
}

/// A consistent reading of the breaker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Reading {
    pub state: State,
    pub failures: u32,
    pub calls: u32,
    pub failure_rate: f64,
    pub since_nanos: u64,
    pub trials_admitted: u32,
    pub trials_succeeded: u32,
    pub open_until_nanos: Option<u64>,
    /// While open: why it opened.
    pub opened_by: Option<Reason>,
}

const KIND_BITS: u32 = 3;
const KIND_MASK: u64 = (1 << KIND_BITS) - 1;

fn pack(generation: u64, state: State) -> u64 {
    (generation << KIND_BITS) | state.code()
}

fn generation_of(word: u64) -> u64 {
    word >> KIND_BITS
}

#[derive(Debug)]
struct Inner {
    /// The closed window when it is too large for [`Packed`].
    ring: Option<Window>,
    trials_admitted: u32,
    trials_succeeded: u32,
    since_nanos: u64,
    /// While open: the reason it opened, with the figures that tripped it, so that
    /// readings keep showing them after the window restarted.
    opened_by: Option<Reason>,
}

/// The state machine. `Sync`; every method takes `&self`.
#[derive(Debug)]
pub(crate) struct Core {
    config: Config,
    /// `need[n]`: the fewest failures among `n` outcomes that open the breaker
    /// (`u32::MAX` below `min_calls`), so deciding takes no division.
    need: Box<[u32]>,
    /// `generation << 3 | state`; written only under `inner`'s lock.
    state: AtomicU64,
    /// When an open breaker may go half-open; written under the lock before `state`.
    open_until: AtomicU64,
    /// The closed window, when it fits one word: recorded without the lock. On a
    /// cache line of its own, so recording does not evict the `state` every admission
    /// reads.
    packed: Option<Padded<Packed>>,
    inner: Mutex<Inner>,
}

/// Keeps a value on a cache line of its own.
#[derive(Debug)]
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl Core {
    pub(crate) fn new(config: Config) -> Self {
        let packed = Packed::new(config.window, 0).map(Padded);
        let ring = packed
            .is_none()
            .then(|| Window::new(config.window as usize));
        let need = (0..=config.window)
            .map(|calls| {
                if calls < config.min_calls.max(1) {
                    return u32::MAX;
                }
                // The same comparison the reference model makes, as `f64`s.
                (1..=calls)
                    .find(|&failures| f64::from(failures) / f64::from(calls) >= config.failure_rate)
                    .unwrap_or(u32::MAX)
            })
            .collect();
        Core {
            config,
            need,
            state: AtomicU64::new(pack(0, State::Closed)),
            open_until: AtomicU64::new(0),
            packed,
            inner: Mutex::new(Inner {
                ring,
                trials_admitted: 0,
                trials_succeeded: 0,
                since_nanos: 0,
                opened_by: None,
            }),
        }
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic cannot happen while the lock is held (no user code runs under it), but
        // a poisoned lock must not take every later call down with it.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current state, without locking.
    pub(crate) fn state(&self) -> State {
        State::from_code(self.state.load(Ordering::Acquire))
    }

    /// Asks to make a call. `now` is read only when the answer depends on time (open).
    #[inline]
    pub(crate) fn admit(
        &self,
        now: impl FnOnce() -> u64,
    ) -> (Result<Ticket, Denied>, Option<Change>) {
        let word = self.state.load(Ordering::Acquire);
        match State::from_code(word) {
            State::Closed | State::Disabled => {
                let ticket = Ticket {
                    generation: generation_of(word),
                    trial: false,
                };
                (Ok(ticket), None)
            }
            State::ForcedOpen => (Err(Denied::ForcedOpen), None),
            State::Open => {
                let now = now();
                let until = self.open_until.load(Ordering::Acquire);
                if now < until {
                    return (
                        Err(Denied::Open {
                            remaining_nanos: until - now,
                        }),
                        None,
                    );
                }
                self.admit_locked(|| now)
            }
            // Seen half-open, but a trial may fail before the lock is taken: then the
            // state is open again and the clock is needed after all.
            State::HalfOpen => self.admit_locked(now),
        }
    }

    /// Admission when the state may change: under the lock, from whatever the state is
    /// now. `now` is only read if it is open.
    fn admit_locked(&self, now: impl FnOnce() -> u64) -> (Result<Ticket, Denied>, Option<Change>) {
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        let generation = generation_of(word);
        match State::from_code(word) {
            State::Closed | State::Disabled => (
                Ok(Ticket {
                    generation,
                    trial: false,
                }),
                None,
            ),
            State::ForcedOpen => (Err(Denied::ForcedOpen), None),
            State::Open => {
                let now = now();
                let until = self.open_until.load(Ordering::Relaxed);
                if now < until {
                    return (
                        Err(Denied::Open {
                            remaining_nanos: until - now,
                        }),
                        None,
                    );
                }
                let opened_at = inner.since_nanos;
                let change = self.transition(
                    &mut inner,
                    State::HalfOpen,
                    Reason::OpenElapsed {
                        after_nanos: now.saturating_sub(opened_at),
                    },
                    now,
                );
                inner.trials_admitted = 1;
                let ticket = Ticket {
                    generation: generation + 1,
                    trial: true,
                };
                (Ok(ticket), Some(change))
            }
            State::HalfOpen => {
                if inner.trials_admitted < self.config.trials {
                    inner.trials_admitted += 1;
                    (
                        Ok(Ticket {
                            generation,
                            trial: true,
                        }),
                        None,
                    )
                } else {
                    (
                        Err(Denied::TrialsTaken {
                            trials: self.config.trials,
                        }),
                        None,
                    )
                }
            }
        }
    }

    /// Records the outcome of an admitted call. An outcome from an earlier generation is
    /// ignored. `now` is read only if the outcome changes the state.
    ///
    /// While closed with a packed window this is one compare-and-swap; the lock is only
    /// taken when the outcome opens the breaker.
    #[inline]
    pub(crate) fn record(
        &self,
        ticket: Ticket,
        failed: bool,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        let word = self.state.load(Ordering::Acquire);
        if generation_of(word) != ticket.generation || State::from_code(word) == State::Disabled {
            return None; // stale, or an operator disabled counting
        }
        if let (Some(packed), State::Closed) = (&self.packed, State::from_code(word)) {
            // A transition since the load above changed the window's tag: then `push`
            // refuses the outcome as stale.
            let (failures, calls) = packed.push(ticket.generation, failed)?;
            if !self.opens(failures, calls) {
                return None;
            }
            let mut inner = self.lock();
            if self.state.load(Ordering::Relaxed) != word {
                return None; // another outcome, or an operator, changed it first
            }
            return Some(self.open_on_rate(&mut inner, failures, calls, now()));
        }
        self.record_locked(ticket, failed, now)
    }

    /// Recording under the lock: a ring window, or half-open trials.
    fn record_locked(
        &self,
        ticket: Ticket,
        failed: bool,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        if generation_of(word) != ticket.generation {
            return None;
        }
        match State::from_code(word) {
            State::Closed => {
                let (failures, calls) = match (&self.packed, &mut inner.ring) {
                    (Some(packed), _) => packed.push(ticket.generation, failed)?,
                    (None, Some(ring)) => {
                        ring.push(failed);
                        (ring.failures() as u32, ring.len() as u32)
                    }
                    (None, None) => unreachable!("a breaker has a packed or a ring window"),
                };
                self.opens(failures, calls)
                    .then(|| self.open_on_rate(&mut inner, failures, calls, now()))
            }
            State::HalfOpen if ticket.trial => {
                if failed {
                    let reason = Reason::TrialFailed {
                        succeeded: inner.trials_succeeded,
                        trials: self.config.trials,
                    };
                    Some(self.open(&mut inner, reason, now()))
                } else {
                    inner.trials_succeeded += 1;
                    (inner.trials_succeeded == self.config.trials).then(|| {
                        let reason = Reason::TrialsSucceeded {
                            trials: self.config.trials,
                        };
                        self.transition(&mut inner, State::Closed, reason, now())
                    })
                }
            }
            _ => None,
        }
    }

    /// Whether `failures` of `calls` reach the threshold (with at least `min_calls`).
    #[inline]
    fn opens(&self, failures: u32, calls: u32) -> bool {
        failures >= self.need[calls as usize]
    }

    fn open_on_rate(&self, inner: &mut Inner, failures: u32, calls: u32, now: u64) -> Change {
        let reason = Reason::FailureRate {
            failures,
            calls,
            threshold: self.config.failure_rate,
        };
        self.open(inner, reason, now)
    }

    /// Failures and outcomes in the closed window. The packed window is read without
    /// the lock; the ring needs it.
    fn counts(&self, inner: &Inner) -> (u32, u32) {
        match (&self.packed, &inner.ring) {
            (Some(packed), _) => packed.counts(),
            (None, Some(ring)) => (ring.failures() as u32, ring.len() as u32),
            (None, None) => (0, 0),
        }
    }

    /// The closed window's failures and outcomes as they are, in any state: empty
    /// from every transition on (readings show the figures that tripped an open one
    /// instead). For the model checks.
    #[allow(dead_code)] // read by the `model-check` crate
    pub(crate) fn window_counts(&self) -> (u32, u32) {
        self.counts(&self.lock())
    }

    /// The window's failure rate, without the lock when the window is packed.
    /// While open: the rate that tripped it (read under the lock).
    pub(crate) fn failure_rate(&self) -> f64 {
        if self.state() == State::Open {
            return self.reading().failure_rate;
        }
        let (failures, calls) = match &self.packed {
            Some(packed) => packed.counts(),
            None => self.counts(&self.lock()),
        };
        rate(failures, calls)
    }

    /// Returns an admitted call's place without recording anything: the caller dropped
    /// it. A trial's slot goes back to the half-open state it was taken from.
    #[inline]
    pub(crate) fn cancel(&self, ticket: Ticket) {
        if !ticket.trial {
            return;
        }
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        if generation_of(word) == ticket.generation && State::from_code(word) == State::HalfOpen {
            inner.trials_admitted -= 1;
        }
    }

    /// An operator's action; `None` if the breaker is already in the target state.
    pub(crate) fn manual(&self, action: ManualAction, now: u64) -> Option<Change> {
        let mut inner = self.lock();
        let current = State::from_code(self.state.load(Ordering::Relaxed));
        let target = match action {
            ManualAction::ForceOpen => State::ForcedOpen,
            ManualAction::Disable => State::Disabled,
            ManualAction::Reset => State::Closed,
        };
        if current == target && action != ManualAction::Reset {
            return None;
        }
        Some(self.transition(&mut inner, target, Reason::Manual(action), now))
    }

    /// A consistent reading of state and counts.
    pub(crate) fn reading(&self) -> Reading {
        let inner = self.lock();
        let state = State::from_code(self.state.load(Ordering::Relaxed));
        let opened_by = inner.opened_by.filter(|_| state == State::Open);
        // While open the window is empty (it restarts with every state): show the
        // figures that tripped it instead.
        let (failures, calls) = match opened_by.and_then(|reason| reason.figures()) {
            Some(figures) => figures,
            None => self.counts(&inner),
        };
        Reading {
            state,
            failures,
            calls,
            failure_rate: rate(failures, calls),
            since_nanos: inner.since_nanos,
            trials_admitted: inner.trials_admitted,
            trials_succeeded: inner.trials_succeeded,
            open_until_nanos: (state == State::Open)
                .then(|| self.open_until.load(Ordering::Relaxed)),
            opened_by,
        }
    }

    /// Performs the open → half-open transition if it is due at `now`: so that a
    /// reading of an idle breaker says what the next call would find. The transition is
    /// dated when it fell due (`open_until`), not when somebody looked; no trial is
    /// admitted by it. Lock-free unless open and due.
    pub(crate) fn settle(&self, now: impl FnOnce() -> u64) -> Option<Change> {
        if self.state() != State::Open {
            return None;
        }
        let now = now();
        if now < self.open_until.load(Ordering::Acquire) {
            return None;
        }
        let mut inner = self.lock();
        if State::from_code(self.state.load(Ordering::Relaxed)) != State::Open {
            return None; // a caller or an operator moved it first
        }
        let due = self.open_until.load(Ordering::Relaxed);
        if now < due {
            return None;
        }
        let reason = Reason::OpenElapsed {
            after_nanos: due.saturating_sub(inner.since_nanos),
        };
        Some(self.transition(&mut inner, State::HalfOpen, reason, due))
    }

    /// Whether a call would be refused now without taking anything: open and not yet
    /// due for trials, or forced open. Lock-free; for turning callers away before they
    /// queue for a bulkhead permit. An open breaker that is due is not refused here: its
    /// trials are admitted by [`admit`](Self::admit), once a caller holds a permit.
    #[inline]
    pub(crate) fn refusal(&self, now: impl FnOnce() -> u64) -> Option<Denied> {
        match self.state() {
            State::ForcedOpen => Some(Denied::ForcedOpen),
            State::Open => {
                let until = self.open_until.load(Ordering::Acquire);
                let now = now();
                (now < until).then(|| Denied::Open {
                    remaining_nanos: until - now,
                })
            }
            _ => None,
        }
    }

    /// The generation of the current state if it is closed: outcomes inferred later by
    /// [`record_closed_failure`](Self::record_closed_failure) carry it.
    #[inline]
    pub(crate) fn closed_generation(&self) -> Option<u64> {
        let word = self.state.load(Ordering::Acquire);
        (State::from_code(word) == State::Closed).then(|| generation_of(word))
    }

    /// Records a failure that no admitted call carries (a caller turned away by a
    /// bulkhead full of slow calls): only while closed, and only in `generation`, the
    /// closed state it was observed in. Half-open (the trials decide), open, forced
    /// open, disabled, or a later generation: ignored.
    pub(crate) fn record_closed_failure(
        &self,
        generation: u64,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        // A non-trial ticket is counted by the closed window alone.
        self.record(
            Ticket {
                generation,
                trial: false,
            },
            true,
            now,
        )
    }

    fn open(&self, inner: &mut Inner, reason: Reason, now: u64) -> Change {
        self.open_until.store(
            now.saturating_add(self.config.open_nanos),
            Ordering::Relaxed,
        );
        let change = self.transition(inner, State::Open, reason, now);
        inner.opened_by = Some(reason);
        change
    }

    /// Moves to `to` with a new generation; every state starts with fresh counts.
    fn transition(&self, inner: &mut Inner, to: State, reason: Reason, now: u64) -> Change {
        let word = self.state.load(Ordering::Relaxed);
        let from = State::from_code(word);
        let generation = generation_of(word) + 1;
        // The window is emptied for the new generation before the state says it began.
        if let Some(packed) = &self.packed {
            packed.reset(generation);
        }
        if let Some(ring) = &mut inner.ring {
            ring.clear();
        }
        inner.trials_admitted = 0;
        inner.trials_succeeded = 0;
        inner.since_nanos = now;
        inner.opened_by = None;
        // Release: a thread that sees the new state also sees `open_until`.
        self.state.store(pack(generation, to), Ordering::Release);
        Change {
            from,
            to,
            reason,
            at_nanos: now,
        }
    }
}

/// `failures / calls`, 0 for an empty window.
fn rate(failures: u32, calls: u32) -> f64 {
    if calls == 0 {
        0.0
    } else {
        f64::from(failures) / f64::from(calls)
    }
}
