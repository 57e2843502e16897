//! The circuit breaker: an exact count-based window, a fixed number of half-open
//! trials, and generations that keep late outcomes out of later states.

mod delivery;
#[cfg(all(test, outbound_guard_loom))]
mod loom_tests;
mod machine;
mod open_period;
mod set_by;
#[cfg(test)]
mod tests;
mod window;

use std::sync::Arc;
use std::time::Duration;

use outbound_guard_settings::{CbMode, SystemSettings};
use tokio::time::Instant;

use delivery::Delivery;
pub(crate) use machine::Ticket;
use machine::{Acted, Change, Config, Denied, Machine};
pub use set_by::SetBy;

use crate::action::ManualAction;
use crate::error::{Cause, CircuitBreakerError};
use crate::observer::{self, Observer, OpenPeriod, Transition};
use crate::state::{Reason, State};
use crate::verdict::Verdict;

/// A breaker for one system. Usually reached through its [`Guard`](crate::Guard), whose
/// calls ask it and tell it for you; usable alone through [`Breaker::try_acquire`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{Breaker, Settings, State, Verdict};
///
/// let settings = Settings::parse("[systems.sber]\ncb_min_calls = 2\ncb_window_size = 2", "inline").unwrap();
/// let breaker = Breaker::new(settings.system("sber").unwrap());
/// breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
/// breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
/// assert_eq!(breaker.state(), State::Open);
/// assert!(breaker.try_acquire().is_err());
/// # }
/// ```
pub struct Breaker {
    name: Arc<str>,
    machine: Machine,
    /// Hands the machine's transitions to the observers in order.
    delivery: Delivery,
    epoch: Instant,
    observers: Vec<Arc<dyn Observer>>,
    /// The observers that want every call's outcome (see [`Observer::wants_calls`]).
    call_observers: Vec<Arc<dyn Observer>>,
    /// Who made the last manual action: [`SetBy`] as a number (see `set_by.rs`).
    set_by: std::sync::atomic::AtomicU8,
    /// Observe mode (`cb_mode = "observe"`): the state machine runs as usual, but a
    /// call it would refuse (open, or half-open with every trial taken) is admitted
    /// uncounted. A forced-open breaker still refuses.
    observing: std::sync::atomic::AtomicBool,
    /// Calls admitted while observing that the breaker would have refused.
    would_have_refused: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Breaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Breaker")
            .field("name", &self.name)
            .field("state", &self.machine.state())
            .field("observing", &self.observing())
            .finish_non_exhaustive()
    }
}

/// A consistent reading of a breaker, for health checks and dashboards.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The system.
    pub system: Arc<str>,
    /// The state.
    pub state: State,
    /// Failures in the window (closed); while open, the failures that tripped it.
    pub failures: u32,
    /// Outcomes in the window (closed); while open, the outcomes it was judged on.
    pub calls: u32,
    /// `failures / calls`, 0 for an empty window; while open, the rate that tripped it.
    pub failure_rate: f64,
    /// When it entered this state.
    pub since: Instant,
    /// While open: time left until trial calls.
    pub retry_after: Option<Duration>,
    /// While half-open: the trial calls so far (none in other states).
    pub trials: Trials,
    /// While open: why it opened ([`Reason::FailureRate`] or [`Reason::TrialFailed`],
    /// with the figures shown in `failures` and `calls`).
    pub opened_by: Option<Reason>,
    /// While forced open or disabled: who put it there, the settings file (`cb_mode`)
    /// or an operator (the API).
    pub set_by: Option<SetBy>,
    /// While open: the length of this open period, from `since` to the trials:
    /// `cb_open_duration`, backed off, with jitter, or as an upstream's retry hint asked.
    pub open_for: Option<Duration>,
    /// While open: the upstream's retry hint (`Retry-After`, `grpc-retry-pushback-ms`)
    /// when it made this open period longer than the breaker's own, capped by
    /// `cb_open_max`.
    pub retry_hint: Option<Duration>,
    /// Observe mode (`cb_mode = "observe"`): the state is what the breaker would be in,
    /// but it refuses no call (a forced-open breaker still refuses every call).
    pub observing: bool,
    /// Calls admitted in observe mode that the breaker would have refused (open, or
    /// half-open with every trial taken), since it was built.
    pub would_have_refused: u64,
}

/// A half-open breaker's trial calls so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Trials {
    /// Trial calls admitted, still running or already ended.
    pub admitted: u32,
    /// Trial calls that succeeded.
    pub succeeded: u32,
}

impl Breaker {
    /// A closed breaker with the system's `cb_…` settings and no observers (a breaker
    /// that reports to observers is a guard's: [`Guard::builder`](crate::Guard::builder),
    /// then [`Guard::breaker`](crate::Guard::breaker)).
    pub fn new(settings: &SystemSettings) -> Self {
        Self::observed(settings, Vec::new())
    }

    /// A closed breaker that reports to `observers`.
    pub(crate) fn observed(settings: &SystemSettings, observers: Vec<Arc<dyn Observer>>) -> Self {
        let config = config_of(settings);
        let call_observers = observers
            .iter()
            .filter(|o| o.wants_calls())
            .cloned()
            .collect();
        let machine = Machine::new(config);
        machine.seed(seed_of(settings.name()));
        Breaker {
            name: Arc::from(settings.name()),
            machine,
            delivery: Delivery::new(),
            epoch: Instant::now(),
            observers,
            call_observers,
            set_by: std::sync::atomic::AtomicU8::new(set_by::NOBODY),
            observing: std::sync::atomic::AtomicBool::new(false),
            would_have_refused: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// The observers of every call's outcome.
    pub(crate) fn call_observers(&self) -> &[Arc<dyn Observer>] {
        &self.call_observers
    }

    /// Asks to make a call: a permit to [finish](BreakerPermit::finish) with the call's
    /// verdict, or the reason it may not go ahead. Dropping the permit unfinished returns
    /// it without counting anything.
    ///
    /// The breaker alone, without the guard's bulkhead, timeout and elapsed check: for
    /// code that guards a call its own way (a synchronous client, a client with its own
    /// concurrency limit and deadline) and for tests of the breaker's rules. A guarded
    /// call ([`Guard::call`](crate::Guard::call), the attributes, the layers) asks for
    /// its permit itself.
    ///
    /// # Errors
    ///
    /// [`Cause::Open`](crate::Cause::Open) while open (with the time left),
    /// [`Cause::HalfOpenFull`](crate::Cause::HalfOpenFull) while half-open with every trial
    /// taken, [`Cause::ForcedOpen`](crate::Cause::ForcedOpen) while forced open.
    #[inline]
    pub fn try_acquire(&self) -> Result<BreakerPermit<'_>, CircuitBreakerError> {
        match self.machine.admit_flowing() {
            Some(ticket) => Ok(BreakerPermit {
                breaker: self,
                ticket: Some(ticket),
            }),
            None => self.try_acquire_stopped(),
        }
    }

    /// The ticket of a call admitted as [`try_acquire`](Self::try_acquire) admits it,
    /// for a holder that counts or [cancels](Self::cancel) it itself.
    #[inline]
    pub(crate) fn acquire_ticket(&self) -> Result<Ticket, CircuitBreakerError> {
        match self.machine.admit_flowing() {
            Some(ticket) => Ok(ticket),
            None => self.try_acquire_stopped().map(BreakerPermit::into_ticket),
        }
    }

    /// [`try_acquire`](Self::try_acquire) while not seen closed or disabled: open, due
    /// for trials, half-open or forced open (or just moved on from one of them).
    #[inline(never)]
    fn try_acquire_stopped(&self) -> Result<BreakerPermit<'_>, CircuitBreakerError> {
        let (admission, change) = self.machine.admit(|| self.nanos(Instant::now()));
        // The permit exists before any observer hears of the transition (open →
        // half-open): whatever an observer does, the trial's slot is owned and goes
        // back if it is dropped.
        let answer = match admission {
            Ok(ticket) => Ok(BreakerPermit {
                breaker: self,
                ticket: Some(ticket),
            }),
            Err(denied) if self.observes(denied) => {
                self.would_have_refused
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let cause = Self::cause(denied);
                observer::notify(&self.observers, &self.name, "on_would_refuse", |o| {
                    o.on_would_refuse(&self.name, &cause);
                });
                Ok(BreakerPermit {
                    breaker: self,
                    ticket: Some(Ticket::UNCOUNTED),
                })
            }
            Err(denied) => Err(CircuitBreakerError::new(&self.name, Self::cause(denied))),
        };
        self.report(change);
        answer
    }

    /// Whether a call refused for `denied` is admitted all the same, uncounted: in
    /// observe mode, for anything but a forced-open breaker.
    #[inline]
    fn observes(&self, denied: Denied) -> bool {
        !matches!(denied, Denied::ForcedOpen) && self.observing()
    }

    /// Whether the breaker is in observe mode (`cb_mode = "observe"`, or
    /// [`ManualAction::Observe`]): it judges and moves through its states as usual but
    /// refuses no call, except while forced open.
    pub(crate) fn observing(&self) -> bool {
        self.observing.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Turns observe mode on or off: whether that changed anything. The state, window
    /// and trials are kept: turned off while it would be open, the breaker refuses
    /// calls from the next one on. The observers hear of it
    /// ([`Observer::on_observing`]). The settings file's `cb_mode = "observe"` calls
    /// this at startup and on a reload; an operator through [`act`](Self::act).
    pub(crate) fn set_observing(&self, on: bool) -> bool {
        let before = self.observing.swap(on, std::sync::atomic::Ordering::AcqRel);
        if before == on {
            return false;
        }
        observer::notify(&self.observers, &self.name, "on_observing", |observer| {
            observer.on_observing(&self.name, on);
        });
        true
    }

    /// Counts the outcome of the call admitted with `ticket`, which ended at `now`, as
    /// `verdict` judged it.
    #[inline]
    pub(crate) fn count_at(&self, ticket: Ticket, verdict: Verdict, now: Instant) {
        let change = self.machine.count(ticket, verdict, || self.nanos(now));
        self.report(change);
    }

    /// Seeds the random share `cb_open_jitter` adds to each open period: the same seed
    /// gives the same open periods, so a test under tokio's paused clock can assert
    /// them exactly. Each breaker is otherwise seeded at random when built.
    pub fn seed_jitter(&self, seed: u64) {
        self.machine.seed(seed);
    }

    /// Gives back the place of a call admitted with `ticket` (a trial slot) without
    /// counting anything: the call was abandoned.
    #[inline]
    pub(crate) fn cancel(&self, ticket: Ticket) {
        self.machine.cancel(ticket);
    }

    fn cause(denied: Denied) -> Cause {
        match denied {
            Denied::Open { remaining_nanos } => Cause::Open {
                retry_after: Duration::from_nanos(remaining_nanos),
            },
            Denied::TrialsTaken { trials } => Cause::HalfOpenFull { trials },
            Denied::ForcedOpen => Cause::ForcedOpen,
        }
    }

    /// The current state. An open breaker whose `cb_open_duration` has passed is
    /// half-open: reading it performs that transition (dated when it fell due, reported
    /// to the observers as usual), so an idle breaker never looks stuck open. Lock-free
    /// unless that transition is due.
    ///
    /// **Not a read without side effects**: a due transition is made here and the
    /// observers (logs, metrics, yours) hear of it from this call, on this thread. For a
    /// reading that changes nothing, see [`peek`](Self::peek).
    pub fn state(&self) -> State {
        self.settle();
        self.machine.state()
    }

    /// State, counts and timing, read together. As with [`state`](Self::state), a due
    /// open → half-open transition happens first, and the observers hear of it: **not a
    /// read without side effects** (see [`peek`](Self::peek)). While open, `failures`,
    /// `calls` and `failure_rate` are the figures that tripped it, and `opened_by` the
    /// reason.
    pub fn snapshot(&self) -> Snapshot {
        self.settle();
        self.peek()
    }

    /// [`snapshot`](Self::snapshot) without its side effect: the breaker as it stands,
    /// no transition made, no observer told. An open breaker whose `cb_open_duration`
    /// has passed reads `Open` with a `retry_after` of zero: the next call (or
    /// [`state`](Self::state), [`snapshot`](Self::snapshot)) moves it to half-open.
    ///
    /// For code that must not act on the breaker: an observer looking at the breaker
    /// it observes, a debugger, a test asserting that nothing moved. `state` and
    /// `snapshot` stay the readings for health and dashboards, where an idle breaker
    /// must not look stuck open; this one is as cheap, and offered because a plain read
    /// costs nothing to keep (the transition was always a separate step before it).
    pub fn peek(&self) -> Snapshot {
        let reading = self.machine.reading();
        let now = self.nanos(Instant::now());
        Snapshot {
            system: Arc::clone(&self.name),
            state: reading.state,
            failures: reading.failures,
            calls: reading.calls,
            failure_rate: reading.failure_rate,
            since: self.epoch + Duration::from_nanos(reading.since_nanos),
            retry_after: reading
                .open_until_nanos
                .map(|until| Duration::from_nanos(until.saturating_sub(now))),
            trials: Trials {
                admitted: reading.trials_admitted,
                succeeded: reading.trials_succeeded,
            },
            opened_by: reading.opened_by,
            set_by: self.set_by_in(reading.state),
            open_for: reading
                .opening
                .map(|opening| Duration::from_nanos(opening.nanos)),
            retry_hint: reading
                .opening
                .and_then(|opening| opening.hint_nanos)
                .map(Duration::from_nanos),
            observing: self.observing(),
            would_have_refused: self
                .would_have_refused
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Performs a due open → half-open transition: no background task is needed for
    /// the readings (health, metrics, [`state`](Self::state)) of an idle breaker to
    /// move on when `cb_open_duration` has passed.
    fn settle(&self) {
        let change = self.machine.settle(|| self.nanos(Instant::now()));
        self.report(change);
    }

    /// The rejection a caller would get now, if the breaker refuses calls without
    /// needing anything from it (open and not yet due, or forced open). Takes nothing,
    /// no lock: for turning callers away before they wait for a bulkhead permit.
    #[inline]
    pub(crate) fn refusal(&self) -> Option<CircuitBreakerError> {
        let denied = self.machine.refusal(|| self.nanos(Instant::now()))?;
        if self.observes(denied) {
            return None;
        }
        Some(CircuitBreakerError::new(&self.name, Self::cause(denied)))
    }

    /// The generation of the current state, if closed.
    #[inline]
    pub(crate) fn closed_generation(&self) -> Option<u64> {
        self.machine.closed_generation()
    }

    /// Counts a failure that no admitted call carries, only while the breaker is still
    /// closed in `generation`.
    pub(crate) fn count_closed_failure(&self, generation: u64) {
        let change = self
            .machine
            .count_closed_failure(generation, || self.nanos(Instant::now()));
        self.report(change);
    }

    /// Failures / outcomes in the window now, 0 for an empty window; while open, the
    /// rate that tripped it. Takes no lock unless open.
    #[cfg(any(feature = "metrics", test))]
    pub(crate) fn failure_rate(&self) -> f64 {
        self.machine.failure_rate()
    }

    /// The failure-rate threshold in effect.
    pub(crate) fn failure_rate_threshold(&self) -> f64 {
        self.machine.config().failure_rate
    }

    /// An operator's action: whether it did anything. One rule: only a change of state
    /// is a transition, logged, counted and reported to the observers with reason
    /// [`Reason::Manual`]. A reset of a closed breaker empties its window (logged as a
    /// reset, `sber reset by an operator: window cleared, 4 of 10 had failed`: no
    /// transition, no `closed → closed`); a reset of an empty closed window is silent
    /// (nothing logged, counted or reported) but forgets the calls in flight all the
    /// same: their outcomes never land. Any other action that finds the breaker in its
    /// target state (force open of a forced-open breaker, disable of a disabled one) is
    /// a no-op: nothing changes, and nothing is logged, counted or reported.
    ///
    /// [`Observe`](ManualAction::Observe) and [`Enforce`](ManualAction::Enforce) turn
    /// observe mode on and off beside the state, which they keep: the observers hear of
    /// it ([`Observer::on_observing`]) when it changes. The file's `cb_mode` sets the
    /// mode again on a reload that changes it.
    pub fn act(&self, action: ManualAction) -> bool {
        match action {
            ManualAction::Observe => self.set_observing(true),
            ManualAction::Enforce => self.set_observing(false),
            _ => self.manual_by(action, SetBy::Operator),
        }
    }

    /// The action itself: whether it did anything.
    fn manual_action(&self, action: ManualAction, reason: Reason) -> bool {
        match self.machine.act(action, reason, self.nanos(Instant::now())) {
            Acted::Moved(change) => {
                self.report(Some(change));
                true
            }
            Acted::Cleared { failures, calls } => {
                let who = match reason {
                    Reason::Settings(_) => "the settings file",
                    _ => "an operator",
                };
                crate::hooks::window_cleared(&self.name, who, failures, calls);
                true
            }
            Acted::Nothing => false,
        }
    }

    #[inline]
    pub(crate) fn nanos(&self, at: Instant) -> u64 {
        duration_nanos(at.saturating_duration_since(self.epoch))
    }

    /// After a call into the machine: if it made a transition, hands the queued
    /// transitions to the observers (see [`Delivery`]).
    #[inline]
    fn report(&self, change: Option<Change>) {
        if change.is_some() {
            self.delivery
                .run(&self.machine, |change| self.notify(change));
        }
    }

    /// One transition to every observer. An observer that panics is contained: the
    /// panic is logged and the others, and the breaker, go on.
    fn notify(&self, change: &Change) {
        let transition = Transition {
            system: &self.name,
            from: change.from,
            to: change.to,
            reason: change.reason,
            at: self.epoch + Duration::from_nanos(change.at_nanos),
            open: change.opening.map(|opening| OpenPeriod {
                length: Duration::from_nanos(opening.nanos),
                retry_hint: opening.hint_nanos.map(Duration::from_nanos),
                backed_off: opening.backed_off,
            }),
            observing: self.observing(),
        };
        observer::notify(&self.observers, &self.name, "on_transition", |observer| {
            observer.on_transition(&transition);
        });
    }
}

/// The breaker's parameters in `settings`.
fn config_of(settings: &SystemSettings) -> Config {
    Config {
        window: settings.cb_window_size(),
        min_calls: settings.cb_min_calls(),
        failure_rate: settings.cb_failure_rate(),
        open_nanos: duration_nanos(settings.cb_open_duration()),
        open_max_nanos: duration_nanos(settings.cb_open_max()),
        backoff: settings.cb_open_backoff(),
        jitter: settings.cb_open_jitter(),
        trials: settings.cb_half_open_calls(),
    }
}

/// A seed for a breaker's jitter: random per process (std's `RandomState`), mixed with
/// the system's name, so replicas (and systems) opened by one outage draw apart.
fn seed_of(name: &str) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(name)
}

impl Breaker {
    /// A manual action, and who made it: whether it changed the state. A no-op action
    /// changes nothing, not even who set the state.
    pub(crate) fn manual_by(&self, action: ManualAction, by: SetBy) -> bool {
        use std::sync::atomic::Ordering;
        // Stored first: a reading that sees the new state sees who set it (or a later one).
        let before = self.set_by.swap(by.code(), Ordering::AcqRel);
        let reason = match by {
            SetBy::File => Reason::Settings(action),
            SetBy::Operator => Reason::Manual(action),
        };
        let changed = self.manual_action(action, reason);
        if !changed {
            // Unless another action has stored its own since.
            let _ = self.set_by.compare_exchange(
                by.code(),
                before,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
        changed
    }

    /// Who set `state`, if it is one a manual action sets and keeps.
    fn set_by_in(&self, state: State) -> Option<SetBy> {
        if !matches!(state, State::ForcedOpen | State::Disabled) {
            return None;
        }
        SetBy::from_code(self.set_by.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Who forced the breaker open or disabled it, while it is: the settings file
    /// (`cb_mode`) or an operator (the API).
    pub(crate) fn set_by(&self) -> Option<SetBy> {
        self.set_by_in(self.state())
    }

    /// Tells the observers the settings the guard's calls run under from now on
    /// ([`Observer::on_settings`]).
    pub(crate) fn announce_settings(&self, settings: &SystemSettings) {
        observer::notify(&self.observers, &self.name, "on_settings", |observer| {
            observer.on_settings(settings);
        });
    }

    /// Tells the observers an adaptive bulkhead's limit.
    #[cold]
    pub(crate) fn announce_limit(&self, limit: usize) {
        observer::notify(
            &self.observers,
            &self.name,
            "on_bulkhead_limit",
            |observer| {
                observer.on_bulkhead_limit(&self.name, limit);
            },
        );
    }

    /// Applies the file's `cb_mode` when it changed from `previous` (`None` at startup,
    /// where `auto` changes nothing). Back to `auto`, only a state the file set is reset:
    /// an operator's action stands until an operator undoes it.
    pub(crate) fn apply_mode(&self, mode: CbMode, previous: Option<CbMode>) {
        if previous == Some(mode) {
            return;
        }
        // Observe mode is a flag beside the state: on for `observe`, off for the others.
        self.set_observing(mode == CbMode::Observe);
        match mode {
            CbMode::ForcedOpen => {
                self.manual_by(ManualAction::ForceOpen, SetBy::File);
            }
            CbMode::Disabled => {
                self.manual_by(ManualAction::Disable, SetBy::File);
            }
            CbMode::Auto | CbMode::Observe => {
                if previous.is_some() && self.set_by() == Some(SetBy::File) {
                    self.manual_by(ManualAction::Reset, SetBy::File);
                }
            }
        }
    }

    /// A reload's `cb_…` settings, keeping the state, its generation and open period,
    /// trials in progress and the window's newest outcomes; they apply from the next
    /// outcome (an open period already running keeps its end).
    pub(crate) fn reconfigure(&self, settings: &SystemSettings) {
        self.machine.reconfigure(config_of(settings));
    }
}

fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Permission to make one call, from [`Breaker::try_acquire`]: [`finish`](Self::finish)
/// it with the call's [`Verdict`]; dropping it unfinished means the call was abandoned,
/// and nothing is counted (a trial slot goes back).
#[derive(Debug)]
#[must_use = "a permit dropped unfinished counts nothing"]
pub struct BreakerPermit<'a> {
    breaker: &'a Breaker,
    ticket: Option<Ticket>,
}

impl BreakerPermit<'_> {
    /// The call ended: its outcome counted as `verdict` says, reading the clock only if
    /// the state changes (or the verdict carries the upstream's retry hint).
    #[inline]
    pub fn finish(mut self, verdict: Verdict) {
        if let Some(ticket) = self.ticket.take() {
            let breaker = self.breaker;
            let change = breaker
                .machine
                .count(ticket, verdict, || breaker.nanos(Instant::now()));
            breaker.report(change);
        }
    }

    /// The ticket, for a holder that counts or [cancels](Breaker::cancel) it itself.
    #[inline]
    pub(crate) fn into_ticket(mut self) -> Ticket {
        self.ticket
            .take()
            .expect("a permit holds its ticket until finished")
    }
}

impl Drop for BreakerPermit<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.breaker.machine.cancel(ticket);
        }
    }
}
