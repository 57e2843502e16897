//! Callers in a closed loop against an upstream that answers as its own state says:
//! [`Replay::looped`]. Each caller calls, waits for its answer (or its refusal), and
//! calls again, until the span is over; the upstream is asked how it answers each call
//! only when the replayed guard lets that call run, given the time and the calls in
//! flight. Everything runs on the replay's paused clock, as
//! [`Replay::scripted`]'s calls do, and repeats itself to the microsecond.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{Cause, Observer};
use outbound_guard_settings::SystemSettings;
use tokio::time::{sleep, Instant, Sleep};

use crate::engine::{
    paused_runtime, replayed, replayed_guard, toward, Ends, Fate, Replay, Running, Started,
    TIMER_SLACK,
};
use crate::recording::{Call, Recorded};
use crate::transitions::{BreakerTransition, Transitions};

impl Replay {
    /// `callers` callers in a closed loop against an upstream whose answers depend on
    /// its own state or on the calls in flight (a queue in front of a few workers, a
    /// cache that warms, a rate limiter), through a fresh guard of `settings`, on a
    /// runtime of its own with a paused clock. From the start, each caller calls, and
    /// calls again as soon as its call ends (answered, failed or cut at
    /// `total_timeout`), or `pause` after a refusal (the breaker's or the bulkhead's: a
    /// refused caller that called again at once would call forever at one instant),
    /// until `span` is over (one the clock cannot reach makes no call); the calls
    /// under way then end as they would. A call that
    /// ends the instant it starts is followed by a pause of a microsecond, so that the
    /// clock moves. The calls that end at one instant all end before any caller calls
    /// again.
    ///
    /// `upstream(at, in_flight)` is asked once for each call, when the replayed guard
    /// lets it run (a call the guard refuses never reaches it), in the order the calls
    /// reach it: `at` since the replay's start, with `in_flight` of the replay's calls
    /// there already (let run and neither answered nor cut; this one not counted). It
    /// answers `Ok(after)`, a success `after` this long, or `Err(after)`, a failure. An
    /// answer later than the guard's `total_timeout` is cut at it and the caller
    /// leaves; what the upstream does with the call is its own state (a server goes on
    /// with a request whose client left). An answer the clock cannot reach
    /// (`Duration::MAX`) never comes.
    ///
    /// Answers and pauses of whole milliseconds keep every instant exact, the guard's
    /// own timers (`total_timeout`, `bulkhead_wait`) included; between whole
    /// milliseconds, answers still end to the microsecond, and a guard's timer may fire
    /// up to 2 ms late, as in any replay.
    ///
    /// The calls made, in the order they started, are the replay's
    /// [`calls`](Replay::calls), with their [`fates`](Replay::fates) and
    /// [`times`](Replay::times); its [`limits`](Replay::limits) are the bulkhead's.
    ///
    /// A queue in front of 2 workers of 100 ms each answers a call when the earliest
    /// free worker has served it: its latency grows with the callers past its workers.
    ///
    /// ```
    /// use std::time::Duration;
    /// use outbound_guard_replay::{Recorded, Replay};
    /// use outbound_guard_settings::Settings;
    ///
    /// let settings = Settings::parse("[systems.sber]\n", "resilience.toml").unwrap();
    /// let sber = settings.system("sber").unwrap();
    /// let service = Duration::from_millis(100);
    /// // The median answer of `callers` callers in a loop for 10 s, in ms.
    /// let median = |callers: u32| {
    ///     let mut free = vec![Duration::ZERO; 2]; // when each worker is next free
    ///     let mut queue = |at: Duration, _in_flight: usize| {
    ///         let worker = free.iter_mut().min().unwrap();
    ///         *worker = (*worker).max(at) + service;
    ///         Ok(*worker - at)
    ///     };
    ///     let pause = Duration::from_millis(10);
    ///     let replay = Replay::looped(sber, &mut queue, callers, Duration::from_secs(10), pause);
    ///     let mut took: Vec<u32> = replay.calls.iter()
    ///         .filter(|c| c.outcome == Recorded::Success)
    ///         .map(|c| c.duration / 1000)
    ///         .collect();
    ///     took.sort_unstable();
    ///     took[took.len() / 2]
    /// };
    /// assert_eq!(median(2), 100);
    /// // 6 callers, 2 workers: each call waits for the two calls ahead of it.
    /// assert_eq!(median(6), 300);
    /// ```
    ///
    /// # Panics
    ///
    /// Where the operating system cannot give the replay's runtime its thread-local
    /// clock (tokio's current-thread runtime fails to build).
    pub fn looped(
        settings: &SystemSettings,
        upstream: &mut dyn FnMut(Duration, usize) -> Result<Duration, Duration>,
        callers: u32,
        span: Duration,
        pause: Duration,
    ) -> Replay {
        let runtime = paused_runtime();
        // The driver polls every call itself (see `replay_with`).
        runtime.block_on(tokio::task::unconstrained(drive(
            settings,
            upstream,
            (callers, span, pause),
        )))
    }
}

/// The upstream: how it answers a call that reaches it at a time, with calls in flight.
type Answers<'u> = dyn FnMut(Duration, usize) -> Result<Duration, Duration> + 'u;

/// The bulkhead's limit at each change (µs since `origin`, the limit).
struct Limits {
    origin: Instant,
    seen: Mutex<Vec<(u64, usize)>>,
}

impl Limits {
    fn push(&self, limit: usize) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push((micros(self.origin, Instant::now()), limit));
        }
    }
}

impl Observer for Limits {
    fn on_bulkhead_limit(&self, _system: &str, limit: usize) {
        self.push(limit);
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

/// How late a guard's timer may fire where the clock moves off whole milliseconds.
const SLACK: Duration = Duration::from_micros(TIMER_SLACK);

/// Whether `at` is a whole number of milliseconds after `origin`, the paused clock's
/// start: tokio's timers fire on whole milliseconds from it.
fn on_grid(origin: Instant, at: Instant) -> bool {
    at.saturating_duration_since(origin).subsec_micros() % 1000 == 0
}

fn micros(origin: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(origin).as_micros()).unwrap_or(u64::MAX)
}

/// One call made: when it started, was answered and reached the upstream (µs since
/// the start; `u64::MAX`: never), its fate and how a recorder would record it.
struct Made {
    start: u64,
    answered: u64,
    began: u64,
    fate: Fate,
    outcome: Recorded,
}

/// What every caller shares.
struct Shared<'u> {
    guard: outbound_guard::Guard,
    ends: Ends,
    upstream: RefCell<&'u mut Answers<'u>>,
    in_flight: Cell<usize>,
    made: RefCell<Vec<Made>>,
    /// The calls inside the guard, for when its next timer may be due.
    started: RefCell<Started>,
    origin: Instant,
    until: Instant,
    pause: Duration,
}

/// One call in flight at the upstream, counted out when it ends or is cut.
struct InFlight<'c>(&'c Cell<usize>);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl Shared<'_> {
    /// The upstream's part of one call: asked now, answered when it says.
    async fn upstream(&self, began: &Cell<u64>) -> Result<(), ()> {
        let now = Instant::now();
        began.set(micros(self.origin, now));
        let answer = self.upstream.borrow_mut()(now - self.origin, self.in_flight.get());
        self.in_flight.set(self.in_flight.get() + 1);
        let _in_flight = InFlight(&self.in_flight);
        let (Ok(after) | Err(after)) = answer;
        if now.checked_add(after).is_some() {
            self.ends.wait(after).await;
        } else {
            std::future::pending::<()>().await;
        }
        answer.map(drop).map_err(drop)
    }

    /// One caller: calls until the span is over.
    async fn caller(&self) {
        while Instant::now() < self.until {
            let start = Instant::now();
            let index = {
                let mut made = self.made.borrow_mut();
                made.push(Made {
                    start: micros(self.origin, start),
                    answered: u64::MAX,
                    began: u64::MAX,
                    fate: Fate::Pending,
                    outcome: Recorded::Rejected,
                });
                made.len() - 1
            };
            self.started.borrow_mut().push(start, index);
            let began = Cell::new(u64::MAX);
            let result = self.guard.call(self.upstream(&began)).await;
            let (fate, outcome) = match result {
                Ok(Ok(())) => (Fate::Ran, Recorded::Success),
                Ok(Err(())) => (Fate::Ran, Recorded::Failure),
                Err(e) => match e.cause() {
                    Cause::Timeout { .. } => (Fate::Ran, Recorded::Timeout),
                    Cause::Slow { .. } => (Fate::Ran, Recorded::Slow),
                    Cause::BulkheadFull { .. } => (Fate::BulkheadFull, Recorded::Rejected),
                    _ => (Fate::Refused, Recorded::Rejected),
                },
            };
            let now = Instant::now();
            if let Some(made) = self.made.borrow_mut().get_mut(index) {
                made.answered = micros(self.origin, now);
                made.began = began.get();
                (made.fate, made.outcome) = (fate, outcome);
            }
            let mut rest = if fate == Fate::Ran {
                Duration::ZERO
            } else {
                self.pause
            };
            if now == start && rest.is_zero() {
                rest = Duration::from_micros(1);
            }
            // After every other end due then: the calls that end at one instant all
            // end before any caller calls again. A pause the clock cannot reach ends
            // this caller.
            let Some(again) = now.checked_add(rest) else {
                return;
            };
            self.ends.until(again).await;
        }
    }
}

/// The drive loop: the clock moved to each end in turn, the guard's own timers fired
/// on the way, until every caller is done.
async fn drive(
    settings: &SystemSettings,
    upstream: &mut Answers<'_>,
    (callers, span, pause): (u32, Duration, Duration),
) -> Replay {
    let origin = Instant::now();
    let transitions = Arc::new(Transitions::default());
    let limits = Arc::new(Limits {
        origin,
        seen: Mutex::new(Vec::new()),
    });
    let guard = replayed_guard(settings, &[transitions.clone(), limits.clone()]);
    limits.push(guard.bulkhead_limit());
    let shared = Shared {
        guard,
        ends: Ends::default(),
        upstream: RefCell::new(upstream),
        in_flight: Cell::new(0),
        made: RefCell::new(Vec::new()),
        started: RefCell::new(Started::new(settings)),
        origin,
        until: origin.checked_add(span).unwrap_or(origin),
        pause,
    };
    let done = Cell::new(0_u32);
    let mut running = Running::new();
    for _ in 0..callers {
        running.push(async {
            shared.caller().await;
            done.set(done.get() + 1);
        });
    }
    let timer = sleep(Duration::ZERO);
    tokio::pin!(timer);
    loop {
        running.settle();
        if done.get() == callers {
            break;
        }
        shared.step(&mut running, timer.as_mut()).await;
    }
    drop(running);
    let made = shared.made.into_inner();
    let limits = limits.seen.lock().map(|l| l.clone()).unwrap_or_default();
    made_into_replay(&made, replayed(&transitions, origin), limits)
}

impl Shared<'_> {
    /// Moves the clock toward the next end, waking the calls due on the way: to the
    /// instant itself where a guard's timer may be due before it (see `drive`).
    async fn step(&self, running: &mut Running<'_>, mut timer: Pin<&mut Sleep>) {
        let now = Instant::now();
        match self.ends.next() {
            Some(end) if end <= now => self.ends.wake_due(now),
            Some(end) => {
                let quiet_until = self.started.borrow_mut().quiet_until(|i| {
                    self.made
                        .borrow()
                        .get(i)
                        .is_none_or(|m| m.fate != Fate::Pending)
                });
                let quiet = quiet_until.is_none_or(|q| end + SLACK < q);
                if !quiet && on_grid(self.origin, now) && on_grid(self.origin, end) {
                    // On whole milliseconds, tokio's clock lands on each timer exactly:
                    // a guard's timer due before `end` fires at its instant.
                    timer.as_mut().reset(end);
                    tokio::select! {
                        biased;
                        () = running.woken() => {}
                        () = timer.as_mut() => {}
                    }
                } else {
                    toward(&self.ends, running, timer.as_mut(), (now, end), quiet_until).await;
                }
            }
            // Only the guard's own timers end the calls under way.
            None => tokio::select! {
                biased;
                () = running.woken() => {}
                () = sleep(Duration::from_secs(1)) => {}
            },
        }
    }
}

/// The replay of the calls `made`, with the guard's transitions and the bulkhead's
/// limits at each change.
fn made_into_replay(
    made: &[Made],
    transitions: Vec<BreakerTransition>,
    limits: Vec<(u64, usize)>,
) -> Replay {
    Replay {
        fates: made.iter().map(|m| m.fate).collect(),
        transitions,
        asked: Vec::new(),
        decisions: 0,
        times: made.iter().map(|m| (m.answered, m.began)).collect(),
        calls: made
            .iter()
            .map(|m| Call {
                start: m.start,
                duration: u32::try_from(m.answered.saturating_sub(m.start)).unwrap_or(u32::MAX),
                outcome: m.outcome,
            })
            .collect(),
        limits,
    }
}
