//! The breaker's state machine, free of clocks and async: time comes in as nanoseconds
//! since the breaker was built, so the same code runs under tokio's paused clock, in
//! property tests against a reference model, and under loom (`loom_tests`, built with
//! `--cfg outbound_guard_loom`, where `crate::sync` hands out loom's primitives).
//!
//! Concurrency design: every change of state, and every outcome that changes the window,
//! happens under one short `Mutex` (never held across an `.await`, never held while
//! observers run). `state` packs the state kind with a 61-bit generation that grows on
//! every transition; each admitted call carries the generation it was admitted in, and
//! its outcome is counted only if the whole generation still matches under the lock, so
//! an outcome that belongs to an earlier state never moves the current one.
//!
//! Two lock-free shortcuts remain, both trivially right:
//! - admission: a single `Acquire` load of `state` that, while closed, admits the call;
//! - a success landing in a full window without failures changes nothing, so it is
//!   skipped after one load of the window's `(failures, calls)` summary (written under
//!   the lock; it is also what [`Machine::failure_rate`] reads without the lock).
//!
//! Every transition is queued, under the lock, in the order it happened; the breaker
//! hands the queue to its observers in that order ([`Machine::next_change`]).

use std::collections::VecDeque;
use std::time::Duration;

use crossbeam_utils::CachePadded;

pub(crate) use super::open_period::Opening;
use super::open_period::{lengthened, OpenPeriods, Periods};
use super::window::Window;
use crate::action::ManualAction;
use crate::state::{Reason, State};
use crate::sync::{AtomicU32, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::verdict::Verdict;

/// A transition as the core reports it; the breaker adds its name and a clock reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    pub from: State,
    pub to: State,
    pub reason: Reason,
    pub at_nanos: u64,
    /// Into open: how long, and what decided it.
    pub opening: Option<Opening>,
}

/// The breaker's parameters, taken from a system's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    pub window: u32,
    pub min_calls: u32,
    pub failure_rate: f64,
    pub open_nanos: u64,
    /// The longest open period: the cap of backoff, jitter and retry hints.
    pub open_max_nanos: u64,
    /// Each re-opening after a failed trial multiplies the open period by this.
    pub backoff: f64,
    /// A share of the open period, up to this, is added at random to each one.
    pub jitter: f64,
    pub trials: u32,
}

impl Config {
    /// The parameters of the open periods ([`OpenPeriods`]).
    pub(crate) fn periods(&self) -> Periods {
        Periods {
            open_nanos: self.open_nanos,
            open_max_nanos: self.open_max_nanos,
            backoff: self.backoff,
            jitter: self.jitter,
        }
    }
}

/// What a state answers a call before the lock is needed ([`Machine::answer`]).
enum Answer {
    /// Admitted or refused from the state alone.
    Now(Result<Ticket, Denied>),
    /// Open, and its open period is over: half-open, with this call its first trial.
    OpenElapsed,
    /// Half-open: a trial, if one is left.
    Trial,
}

/// The clock of one admission: read at most once, when first needed.
struct Clock<F> {
    read: Option<F>,
    at: u64,
}

impl<F: FnOnce() -> u64> Clock<F> {
    fn new(read: F) -> Self {
        Clock {
            read: Some(read),
            at: 0,
        }
    }

    /// The time, read now if it was not yet.
    fn read(&mut self) -> u64 {
        if let Some(read) = self.read.take() {
            self.at = read();
        }
        self.at
    }
}

/// What an admitted call carries until its outcome is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    generation: u64,
    trial: bool,
}

impl Ticket {
    /// A ticket no state's generation matches (generations have 61 bits): its outcome
    /// counts nothing and cancelling it gives nothing back. For the calls an observing
    /// breaker admits where it would have refused them.
    pub(crate) const UNCOUNTED: Ticket = Ticket {
        generation: u64::MAX,
        trial: false,
    };
}

/// What an operator's action did ([`Machine::act`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Acted {
    /// A transition.
    Moved(Change),
    /// A closed breaker's window was emptied: `failures` of `calls` had failed.
    Cleared { failures: u32, calls: u32 },
    /// Nothing: the breaker was already in the target state, with nothing to forget.
    Nothing,
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
    /// While open: how long, and what decided it.
    pub opening: Option<Opening>,
}

const KIND_BITS: u32 = 3;
const KIND_MASK: u64 = (1 << KIND_BITS) - 1;

fn pack(generation: u64, state: State) -> u64 {
    (generation << KIND_BITS) | code_of(state)
}

/// The state a packed word holds.
fn kind_of(word: u64) -> State {
    State::ALL[(word & KIND_MASK) as usize]
}

/// The state's code in a packed word's low bits.
fn code_of(state: State) -> u64 {
    state.index() as u64
}

fn generation_of(word: u64) -> u64 {
    word >> KIND_BITS
}

#[derive(Debug)]
struct Inner {
    /// The parameters, replaced whole by a reload ([`Machine::reconfigure`]).
    config: Config,
    /// `need[n]`: the fewest failures among `n` outcomes that open the breaker
    /// (`u32::MAX` below `min_calls`), so deciding takes no division.
    need: Box<[u32]>,
    /// The closed window.
    window: Window,
    trials_admitted: u32,
    trials_succeeded: u32,
    since_nanos: u64,
    /// While open: the reason it opened, with the figures that tripped it, so that
    /// readings keep showing them after the window restarted.
    opened_by: Option<Reason>,
    /// Transitions not yet handed to the observers, oldest first.
    changes: VecDeque<Change>,
    /// While open: the running open period.
    opening: Option<Opening>,
    /// What decides the next opening's length: the backoff's base, a retry hint kept
    /// in this state, the jitter's generator.
    periods: OpenPeriods,
}

/// The state machine. `Sync`; every method takes `&self`.
#[derive(Debug)]
pub(crate) struct Machine {
    /// The window's size, for the lock-free check of a full window of successes;
    /// written under the lock.
    window_size: AtomicU32,
    /// `generation << 3 | state`; written only under `inner`'s lock.
    state: AtomicU64,
    /// When an open breaker may go half-open; written under the lock before `state`.
    open_until: AtomicU64,
    /// The closed window's `failures << 32 | calls`, written under the lock whenever the
    /// window changes. On a cache line of its own, so counting does not evict the
    /// `state` every admission reads.
    summary: CachePadded<AtomicU64>,
    inner: Mutex<Inner>,
}

impl Machine {
    pub(crate) fn new(config: Config) -> Self {
        Self::at_generation(config, 0)
    }

    /// A closed core whose generation starts at `generation`: for checks of what
    /// happens when the generation grows large.
    pub(crate) fn at_generation(config: Config, generation: u64) -> Self {
        Machine {
            window_size: AtomicU32::new(config.window),
            state: AtomicU64::new(pack(generation, State::Closed)),
            open_until: AtomicU64::new(0),
            summary: CachePadded::new(AtomicU64::new(0)),
            inner: Mutex::new(Inner {
                config,
                need: need_table(&config),
                window: Window::new(config.window as usize),
                trials_admitted: 0,
                trials_succeeded: 0,
                since_nanos: 0,
                opened_by: None,
                changes: VecDeque::new(),
                opening: None,
                periods: OpenPeriods::new(),
            }),
        }
    }

    pub(crate) fn config(&self) -> Config {
        self.lock().config
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic cannot happen while the lock is held (no user code runs under it), but
        // a poisoned lock must not take every later call down with it.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current state, without locking.
    pub(crate) fn state(&self) -> State {
        kind_of(self.state.load(Ordering::Acquire))
    }

    /// Asks to make a call. `now` is read only when the answer depends on time (open).
    #[inline]
    pub(crate) fn admit(
        &self,
        now: impl FnOnce() -> u64,
    ) -> (Result<Ticket, Denied>, Option<Change>) {
        match self.admit_flowing() {
            Some(ticket) => (Ok(ticket), None),
            None => self.admit_stopped(now),
        }
    }

    /// Admission while closed or disabled, from one load: the ticket, or `None` in the
    /// other states (see [`admit`](Self::admit)).
    #[inline]
    pub(crate) fn admit_flowing(&self) -> Option<Ticket> {
        let word = self.state.load(Ordering::Acquire);
        let kind = word & KIND_MASK;
        (kind == code_of(State::Closed) || kind == code_of(State::Disabled)).then(|| Ticket {
            generation: generation_of(word),
            trial: false,
        })
    }

    /// [`admit`](Self::admit) once the state was not seen closed or disabled: decided on
    /// the state as it is now.
    #[inline(never)]
    pub(crate) fn admit_stopped(
        &self,
        now: impl FnOnce() -> u64,
    ) -> (Result<Ticket, Denied>, Option<Change>) {
        let mut now = Clock::new(now);
        let word = self.state.load(Ordering::Acquire);
        match self.answer(word, Ordering::Acquire, &mut now) {
            Answer::Now(admitted) => (admitted, None),
            // Seen half-open, but a trial may fail before the lock is taken: then the
            // state is open again and the clock is needed after all (read at most once).
            Answer::OpenElapsed | Answer::Trial => self.admit_locked(now),
        }
    }

    /// Admission when the state may change: under the lock, from whatever the state is
    /// now. The clock is only read if it is open.
    fn admit_locked(
        &self,
        mut now: Clock<impl FnOnce() -> u64>,
    ) -> (Result<Ticket, Denied>, Option<Change>) {
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        let generation = generation_of(word);
        match self.answer(word, Ordering::Relaxed, &mut now) {
            Answer::Now(admitted) => (admitted, None),
            Answer::OpenElapsed => {
                let now = now.read();
                let opened_at = inner.since_nanos;
                let change = self.transition(
                    &mut inner,
                    State::HalfOpen,
                    Reason::OpenElapsed {
                        after: Duration::from_nanos(now.saturating_sub(opened_at)),
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
            Answer::Trial if inner.trials_admitted < inner.config.trials => {
                inner.trials_admitted += 1;
                let ticket = Ticket {
                    generation,
                    trial: true,
                };
                (Ok(ticket), None)
            }
            Answer::Trial => {
                let trials = inner.config.trials;
                (Err(Denied::TrialsTaken { trials }), None)
            }
        }
    }

    /// What the state in `word` answers a call, with or without the lock (`order` is the
    /// load's of `open_until`: `Acquire` without it, `Relaxed` under it): closed and
    /// disabled admit, forced open refuses, and open refuses until its end; past its
    /// end, and while half-open, the lock decides. Reads the clock only while open.
    #[inline]
    fn answer(&self, word: u64, order: Ordering, now: &mut Clock<impl FnOnce() -> u64>) -> Answer {
        match kind_of(word) {
            State::Closed | State::Disabled => Answer::Now(Ok(Ticket {
                generation: generation_of(word),
                trial: false,
            })),
            State::ForcedOpen => Answer::Now(Err(Denied::ForcedOpen)),
            State::Open => {
                let now = now.read();
                let until = self.open_until.load(order);
                if now < until {
                    Answer::Now(Err(Denied::Open {
                        remaining_nanos: until - now,
                    }))
                } else {
                    Answer::OpenElapsed
                }
            }
            State::HalfOpen => Answer::Trial,
        }
    }

    /// Counts the outcome of an admitted call, as `verdict` judged it. An outcome from an
    /// earlier generation is ignored. `now` is read only if the outcome changes the state
    /// (or carries a retry hint).
    ///
    /// Under the lock, except a success landing in a full closed window without
    /// failures: that changes nothing, and is skipped after one load.
    #[inline]
    pub(crate) fn count(
        &self,
        ticket: Ticket,
        verdict: Verdict,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        if let Some(hint) = verdict.retry_hint() {
            return self.count_hinted_failure(ticket, duration_nanos(hint), now());
        }
        let failed = verdict.is_failure();
        let word = self.state.load(Ordering::Acquire);
        let kind = word & KIND_MASK;
        if generation_of(word) != ticket.generation || kind == code_of(State::Disabled) {
            return None; // stale, or an operator disabled counting
        }
        if !failed && kind == code_of(State::Closed) {
            // The state's `Acquire` above saw this generation begin, so the summary
            // read is this generation's window or a later one's (then the ticket is
            // stale anyway). Full of successes: one more success changes nothing.
            let (failures, calls) = unpack(self.summary.load(Ordering::Acquire));
            if failures == 0 && calls == self.window_size.load(Ordering::Acquire) {
                return None;
            }
        }
        self.count_locked(ticket, failed, now)
    }

    /// Counting under the lock: the closed window, or half-open trials. The ticket's
    /// whole generation is checked under the lock, so nothing stale is ever counted.
    #[inline(never)]
    fn count_locked(
        &self,
        ticket: Ticket,
        failed: bool,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        let inner = self.lock();
        self.count_in(inner, ticket, failed, None, now)
    }

    /// Counts a failure that carries the upstream's retry hint (`Retry-After`,
    /// `grpc-retry-pushback-ms`), `hint_nanos` from `now`: counted as any failure, and
    /// the open period it starts, or the one running, lasts at least until the hint
    /// (capped by `open_max_nanos` from the opening). While closed, the hint alone opens
    /// nothing: it is kept for an opening in the same closed state. From an earlier
    /// generation, it still lengthens a running open period (the upstream said so), but
    /// counts nothing; from a call an observing breaker admitted where it would have
    /// refused it ([`Ticket::UNCOUNTED`]), it does nothing.
    #[cold]
    #[inline(never)]
    fn count_hinted_failure(&self, ticket: Ticket, hint_nanos: u64, now: u64) -> Option<Change> {
        if ticket == Ticket::UNCOUNTED {
            // A call an enforcing breaker would not have made: its hint lengthens nothing.
            return None;
        }
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        let state = kind_of(word);
        if state == State::Disabled {
            return None;
        }
        let until = now.saturating_add(hint_nanos);
        if generation_of(word) != ticket.generation {
            if state == State::Open {
                self.lengthen(&mut inner, until, hint_nanos);
            }
            return None;
        }
        if state == State::Closed {
            inner.periods.keep_hint(until);
        }
        self.count_in(inner, ticket, true, Some(until), || now)
    }

    /// A running open period lasts at least until `until` (a retry hint of
    /// `hint_nanos`), at most `open_max_nanos` from its start.
    fn lengthen(&self, inner: &mut Inner, until: u64, hint_nanos: u64) {
        let current = self.open_until.load(Ordering::Relaxed);
        let max = inner.config.open_max_nanos;
        if let Some(wanted) = lengthened(max, inner.since_nanos, current, until) {
            self.open_until.store(wanted, Ordering::Release);
            if let Some(opening) = inner.opening.as_mut() {
                opening.nanos = wanted - inner.since_nanos;
                opening.hint_nanos = Some(hint_nanos);
            }
        }
    }

    /// [`count_locked`](Self::count_locked) with the lock taken, the generation not
    /// yet checked; `hint_until`: a retry hint's instant, for a trial that fails.
    fn count_in(
        &self,
        mut inner: MutexGuard<'_, Inner>,
        ticket: Ticket,
        failed: bool,
        hint_until: Option<u64>,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        let word = self.state.load(Ordering::Relaxed);
        if generation_of(word) != ticket.generation {
            return None;
        }
        match kind_of(word) {
            State::Closed => {
                inner.window.push(failed);
                let (failures, calls) = (inner.window.failures() as u32, inner.window.len() as u32);
                self.summary
                    .store(pack_counts(failures, calls), Ordering::Release);
                Self::opens(&inner, failures, calls)
                    .then(|| self.open_on_rate(&mut inner, failures, calls, now()))
            }
            State::HalfOpen if ticket.trial => {
                if failed {
                    let reason = Reason::TrialFailed {
                        succeeded: inner.trials_succeeded,
                        trials: inner.config.trials,
                    };
                    inner.periods.set_hint(hint_until);
                    Some(self.open(&mut inner, reason, now()))
                } else {
                    inner.trials_succeeded += 1;
                    // `>=`: a reload may have lowered the trials below those succeeded.
                    (inner.trials_succeeded >= inner.config.trials).then(|| {
                        let reason = Reason::TrialsSucceeded {
                            trials: inner.config.trials,
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
    fn opens(inner: &Inner, failures: u32, calls: u32) -> bool {
        failures >= inner.need[calls as usize]
    }

    fn open_on_rate(&self, inner: &mut Inner, failures: u32, calls: u32, now: u64) -> Change {
        let reason = Reason::FailureRate {
            failures,
            calls,
            threshold: inner.config.failure_rate,
        };
        self.open(inner, reason, now)
    }

    /// The window's failure rate, without the lock. While open: the rate that tripped
    /// it (read under the lock).
    #[cfg(any(feature = "metrics", test))]
    pub(crate) fn failure_rate(&self) -> f64 {
        if self.state() == State::Open {
            return self.reading().failure_rate;
        }
        let (failures, calls) = unpack(self.summary.load(Ordering::Acquire));
        rate(failures, calls)
    }

    /// The closed window's failures and outcomes as they are, in any state: empty
    /// from every transition on (readings show the figures that tripped an open one
    /// instead). For the model checks.
    #[cfg(all(test, outbound_guard_loom))]
    pub(crate) fn window_counts(&self) -> (u32, u32) {
        let inner = self.lock();
        (inner.window.failures() as u32, inner.window.len() as u32)
    }

    /// The oldest transition not yet handed to the observers, taken off the queue.
    #[cfg(test)]
    pub(crate) fn next_change(&self) -> Option<Change> {
        self.next_change_or(|| ())
    }

    /// [`next_change`](Self::next_change); if there is none, runs `when_empty` before
    /// letting go of the lock, so that no transition can be queued between the look
    /// and what `when_empty` does.
    pub(crate) fn next_change_or(&self, when_empty: impl FnOnce()) -> Option<Change> {
        let mut inner = self.lock();
        let change = inner.changes.pop_front();
        if change.is_none() {
            when_empty();
        }
        change
    }

    /// Whether transitions wait to be handed to the observers.
    #[cfg(test)]
    pub(crate) fn has_changes(&self) -> bool {
        !self.lock().changes.is_empty()
    }

    /// Returns an admitted call's place without counting anything: the caller dropped
    /// it. A trial's slot goes back to the half-open state it was taken from.
    #[inline]
    pub(crate) fn cancel(&self, ticket: Ticket) {
        if !ticket.trial {
            return;
        }
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        if generation_of(word) == ticket.generation && kind_of(word) == State::HalfOpen {
            inner.trials_admitted -= 1;
        }
    }

    /// An operator's action's transition, if it made one. The breaker goes through
    /// [`act`](Self::act); the core's own tests call this.
    #[cfg(test)]
    pub(crate) fn manual(&self, action: ManualAction, now: u64) -> Option<Change> {
        match self.act(action, Reason::Manual(action), now) {
            Acted::Moved(change) => Some(change),
            Acted::Cleared { .. } | Acted::Nothing => None,
        }
    }

    /// An operator's action, with the transition's `reason`: an operator's
    /// ([`Reason::Manual`]) or the settings file's ([`Reason::Settings`]).
    ///
    /// One rule: an action that changes the state is a transition; a reset of a closed
    /// breaker empties the window and starts a new generation (outcomes of calls
    /// admitted before it do not land), without a transition, whatever the window held
    /// (an empty one is [`Acted::Nothing`]: nothing a user can see changed); any other
    /// action that finds the breaker in its target state (a second force open) changes
    /// nothing at all.
    pub(crate) fn act(&self, action: ManualAction, reason: Reason, now: u64) -> Acted {
        let mut inner = self.lock();
        let word = self.state.load(Ordering::Relaxed);
        let current = kind_of(word);
        let target = match action {
            ManualAction::ForceOpen => State::ForcedOpen,
            ManualAction::Disable => State::Disabled,
            ManualAction::Reset => State::Closed,
            // Observe mode is the breaker's flag beside the state, never the core's.
            ManualAction::Observe | ManualAction::Enforce => return Acted::Nothing,
        };
        if current != target {
            return Acted::Moved(self.transition(&mut inner, target, reason, now));
        }
        if current != State::Closed {
            return Acted::Nothing;
        }
        let (failures, calls) = (inner.window.failures() as u32, inner.window.len() as u32);
        inner.window.clear();
        self.summary.store(0, Ordering::Release);
        // A new generation of the same state, an empty window's too: calls admitted
        // before the reset carry the old one, and their outcomes are dropped.
        self.state.store(
            pack(generation_of(word) + 1, State::Closed),
            Ordering::Release,
        );
        if calls == 0 {
            return Acted::Nothing;
        }
        Acted::Cleared { failures, calls }
    }

    /// A consistent reading of state and counts.
    pub(crate) fn reading(&self) -> Reading {
        let inner = self.lock();
        let state = kind_of(self.state.load(Ordering::Relaxed));
        let opened_by = inner.opened_by.filter(|_| state == State::Open);
        // While open the window is empty (it restarts with every state): show the
        // figures that tripped it instead.
        let (failures, calls) = match opened_by.and_then(|reason| reason.figures()) {
            Some(figures) => figures,
            None => (inner.window.failures() as u32, inner.window.len() as u32),
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
            opening: inner.opening.filter(|_| state == State::Open),
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
        if kind_of(self.state.load(Ordering::Relaxed)) != State::Open {
            return None; // a caller or an operator moved it first
        }
        let due = self.open_until.load(Ordering::Relaxed);
        if now < due {
            return None;
        }
        let reason = Reason::OpenElapsed {
            after: Duration::from_nanos(due.saturating_sub(inner.since_nanos)),
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
    /// [`count_closed_failure`](Self::count_closed_failure) carry it.
    #[inline]
    pub(crate) fn closed_generation(&self) -> Option<u64> {
        let word = self.state.load(Ordering::Acquire);
        (kind_of(word) == State::Closed).then(|| generation_of(word))
    }

    /// Counts a failure that no admitted call carries (a caller turned away by a
    /// bulkhead full of slow calls): only while closed, and only in `generation`, the
    /// closed state it was observed in. Half-open (the trials decide), open, forced
    /// open, disabled, or a later generation: ignored.
    pub(crate) fn count_closed_failure(
        &self,
        generation: u64,
        now: impl FnOnce() -> u64,
    ) -> Option<Change> {
        // A non-trial ticket is counted by the closed window alone.
        self.count(
            Ticket {
                generation,
                trial: false,
            },
            Verdict::FAILURE,
            now,
        )
    }

    /// Opens at `now` for the period [`OpenPeriods::open`] decides.
    fn open(&self, inner: &mut Inner, reason: Reason, now: u64) -> Change {
        let after_failed_trial = matches!(reason, Reason::TrialFailed { .. });
        let periods = inner.config.periods();
        let opening = inner.periods.open(&periods, after_failed_trial, now);
        self.open_until
            .store(now.saturating_add(opening.nanos), Ordering::Relaxed);
        let mut change = self.transition(inner, State::Open, reason, now);
        change.opening = Some(opening);
        if let Some(queued) = inner.changes.back_mut() {
            queued.opening = Some(opening);
        }
        inner.opened_by = Some(reason);
        inner.opening = Some(opening);
        change
    }

    /// Seeds the jitter's generator: the same seed gives the same open periods.
    pub(crate) fn seed(&self, seed: u64) {
        self.lock().periods.seed(seed);
    }

    /// Moves to `to` with a new generation; every state starts with fresh counts.
    fn transition(&self, inner: &mut Inner, to: State, reason: Reason, now: u64) -> Change {
        let word = self.state.load(Ordering::Relaxed);
        let from = kind_of(word);
        let generation = generation_of(word) + 1;
        // The window is emptied for the new generation before the state says it began.
        inner.window.clear();
        self.summary.store(0, Ordering::Release);
        inner.trials_admitted = 0;
        inner.trials_succeeded = 0;
        inner.since_nanos = now;
        inner.opened_by = None;
        inner.opening = None;
        // A kept hint belonged to the state left; closing also ends the backoff.
        inner.periods.new_state(to == State::Closed);
        // Release: a thread that sees the new state also sees `open_until` and the
        // emptied summary.
        self.state.store(pack(generation, to), Ordering::Release);
        let change = Change {
            from,
            to,
            reason,
            at_nanos: now,
            opening: None,
        };
        inner.changes.push_back(change);
        change
    }
}

/// The window's summary word: `failures << 32 | calls`.
fn pack_counts(failures: u32, calls: u32) -> u64 {
    (u64::from(failures) << 32) | u64::from(calls)
}

/// `(failures, calls)` of a summary word.
fn unpack(summary: u64) -> (u32, u32) {
    ((summary >> 32) as u32, summary as u32)
}

/// A duration in nanoseconds, saturated.
fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// `failures / calls`, 0 for an empty window.
fn rate(failures: u32, calls: u32) -> f64 {
    if calls == 0 {
        0.0
    } else {
        f64::from(failures) / f64::from(calls)
    }
}

/// `need[n]` for `n` outcomes, 0 to the window's size.
fn need_table(config: &Config) -> Box<[u32]> {
    (0..=config.window)
        .map(|calls| {
            if calls < config.min_calls.max(1) {
                return u32::MAX;
            }
            // The same comparison the reference model makes, as `f64`s.
            (1..=calls)
                .find(|&failures| f64::from(failures) / f64::from(calls) >= config.failure_rate)
                .unwrap_or(u32::MAX)
        })
        .collect()
}

impl Machine {
    /// New parameters from a reload, keeping what the breaker knows: the state, its
    /// generation and open period, trials in progress, and the window's newest outcomes
    /// (as many as the new size holds). The new thresholds apply from the next outcome.
    pub(crate) fn reconfigure(&self, config: Config) {
        let mut inner = self.lock();
        if config.window != inner.config.window {
            inner.window = inner.window.resized(config.window as usize);
            let (failures, calls) = (inner.window.failures() as u32, inner.window.len() as u32);
            self.summary
                .store(pack_counts(failures, calls), Ordering::Release);
        }
        inner.need = need_table(&config);
        inner.config = config;
        self.window_size.store(config.window, Ordering::Release);
    }
}
