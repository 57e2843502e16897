//! The replay: one system's recorded calls through a fresh real [`Guard`] of the
//! settings asked for, each at its recorded start on tokio's paused clock (nothing
//! sleeps for real), and what each call's fate was. Starts and ends keep the
//! recording's microseconds: the replay moves the clock to each itself rather than
//! leave them to tokio's whole-millisecond timers ([`Ends`]).
//!
//! Each call is `guard.call(upstream)`, the code path a service runs, where the
//! upstream is a future that answers as the recording says:
//!
//! - `success`, `slow`: `Ok` after the recorded duration (the replayed guard judges
//!   slowness by its own `cb_slow_threshold`);
//! - `failure`: `Err` after the recorded duration;
//! - `timeout`: no answer at all, so it is cut at the replayed `total_timeout` (the
//!   recording only knows it took at least its own);
//! - `timeout` cut by the client's `read_timeout` (`"cut":"read_timeout"`): no answer
//!   by then, so the replayed client cuts it at its own `read_timeout` (an error); a
//!   longer `read_timeout` than the recording's cannot be told (see `knowable`);
//! - any answer that came later than the replayed `read_timeout`: cut by it, an error;
//! - `cancelled`: no answer, and the caller gives up after the recorded duration;
//! - `rejected` (the recording's breaker or bulkhead refused it, so nobody knows how the
//!   upstream would have answered): answered as [`guess`](super::guess) says, and
//!   counted apart as a guess.
//!
//! What an operator or the settings file's `cb_mode` did to the recording's breaker
//! (force open, disable, back to closed) is done to the replayed one at the same time:
//! no outcome would have caused it.
//!
//! A replayed breaker always enforces: `cb_mode = "observe"` in the settings replayed
//! is played as `auto`, since the question a replay answers is what the breaker would
//! have refused.

use std::collections::{BinaryHeap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt as _};
use outbound_guard::{CallOptions, Cause, Guard, ManualAction, Observer};
use outbound_guard_settings::SystemSettings;
use tokio::sync::oneshot;
use tokio::time::{sleep, Instant, Sleep};

use super::guess::Options;
use super::recording::{Call, Recorded};
use crate::transitions::{BreakerTransition, Transitions};

/// What the replayed guard did with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[non_exhaustive]
pub enum Fate {
    /// Still running (never seen once the replay is over).
    Pending = 0,
    /// Reached the upstream.
    Ran = 1,
    /// The breaker refused it: open, half-open full or forced open.
    Refused = 2,
    /// The bulkhead refused it.
    BulkheadFull = 3,
}

impl Fate {
    fn from_u8(value: u8) -> Fate {
        match value {
            1 => Fate::Ran,
            2 => Fate::Refused,
            3 => Fate::BulkheadFull,
            _ => Fate::Pending,
        }
    }
}

/// One system's replay under one setting.
#[derive(Debug)]
#[non_exhaustive]
pub struct Replay {
    /// Each call's fate, in the recording's (start) order.
    pub fates: Vec<Fate>,
    pub transitions: Vec<BreakerTransition>,
    /// Of each call without a recorded outcome (in order): whether it was answered
    /// failing, if the replayed guard let it run (its answer was asked); `None` if it
    /// was refused, and its answer changed nothing the breaker saw.
    pub asked: Vec<Option<bool>>,
    /// How many answers were asked (scripted: the n-th asked is `fails[n]`), in the order asked.
    pub decisions: usize,
    /// Of each call, kept by [`Replay::scripted`] and [`Replay::looped`] (else
    /// empty): when its caller was answered and when its upstream call began (µs
    /// since the start; `u64::MAX`: it never did).
    pub times: Vec<(u64, u64)>,
    /// Of [`Replay::looped`] (else empty): the calls its callers made, in the order
    /// they started, as a recorder would have recorded them: `success`, `failure`,
    /// `timeout` when cut at `total_timeout`, `rejected` when refused (by the breaker
    /// or the bulkhead: [`fates`](Replay::fates) says which).
    pub calls: Vec<Call>,
    /// Of [`Replay::looped`] (else empty): the bulkhead's limit at the start and at
    /// each change (µs since the start, the limit): an adaptive bulkhead's moves.
    pub limits: Vec<(u64, usize)>,
}

/// What a replay may be asked for beside the recording's answers (`simulate`'s runs).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Extras {
    /// Every failing answer carries this `Retry-After`, which the replayed guard reads
    /// (an upstream answering 429).
    pub retry_after: Option<Duration>,
    /// Keep each call's [`times`](Replay::times).
    pub timed: bool,
}

/// How the calls without a recorded outcome are answered, each when the replayed guard
/// lets it run (never before: one it refuses is never asked).
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// Each call failing or not, by its index among the calls without an outcome.
    Each(Vec<bool>),
    /// By the order in which they are asked: the n-th asked fails if `path[n]` is true;
    /// past the path's end, it succeeds. Exploring every path answers every way the
    /// calls that ran could have been answered.
    Path(Vec<bool>),
}

/// The answers of the calls without a recorded outcome, given as they are asked.
#[derive(Debug)]
struct Unknowns {
    options: Arc<[Options]>,
    choice: Choice,
    asked: Vec<Option<bool>>,
    decisions: usize,
}

impl Unknowns {
    /// The answer of the `index`-th call without a recorded outcome.
    fn ask(&mut self, index: usize) -> (Recorded, u32) {
        let fails = match &self.choice {
            Choice::Each(each) => each.get(index).copied().unwrap_or(false),
            Choice::Path(path) => path.get(self.decisions).copied().unwrap_or(false),
        };
        self.decisions += 1;
        if let Some(slot) = self.asked.get_mut(index) {
            *slot = Some(fails);
        }
        self.options
            .get(index)
            .map_or((Recorded::Success, 0), |o| o.answer(fails))
    }
}

/// How the upstream answers one replayed call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    Ok(Duration),
    Err(Duration),
    Hang,
    /// The caller gives up after this long.
    Abandon(Duration),
}

/// The replayed client's `read_timeout` against the recording's.
#[derive(Debug, Clone, Copy)]
struct Client {
    /// Shorter than the recording's: every answer later than this is cut at it.
    cut_at: Option<Duration>,
    /// Longer than the recording's, by this: a call the recording's client cut waits
    /// this much longer before the replayed one cuts it (a setting the recording
    /// cannot tell, flagged as such).
    longer_by: Duration,
}

impl Client {
    /// The replayed `read_timeout` against the recording's `limit`, if known: with the
    /// same limit, every call ends as recorded, to the microsecond.
    fn new(read_timeout: Duration, limit: Option<Duration>) -> Client {
        let limit = limit.unwrap_or(read_timeout);
        Client {
            cut_at: (read_timeout < limit).then_some(read_timeout),
            longer_by: read_timeout.saturating_sub(limit),
        }
    }
}

/// How the upstream answers a call recorded as `outcome` after `duration` (µs), as
/// seen by the replayed `client`: an answer that came later than a shorter
/// `read_timeout` is cut by it (an error at `read_timeout`), as is a call the
/// recording's client cut.
fn answer(outcome: Recorded, duration: u32, client: Client) -> Answer {
    let duration = Duration::from_micros(u64::from(duration));
    match (outcome, client.cut_at) {
        (
            Recorded::Success
            | Recorded::Slow
            | Recorded::Rejected
            | Recorded::Failure
            | Recorded::Cut,
            Some(cut_at),
        ) if duration > cut_at => Answer::Err(cut_at),
        (Recorded::Success | Recorded::Slow | Recorded::Rejected, _) => Answer::Ok(duration),
        (Recorded::Failure, _) => Answer::Err(duration),
        (Recorded::Cut, _) => Answer::Err(duration + client.longer_by),
        (Recorded::Timeout, _) => Answer::Hang,
        (Recorded::Cancelled, _) => Answer::Abandon(duration),
    }
}

/// Replays `calls` (in start order) through a fresh guard of `settings`, on a runtime of
/// its own with a paused clock, doing `actions` to its breaker at their times.
/// `options` are the answers the calls without a recorded outcome may be given, one
/// each in order, and `choice` picks one when the replayed guard lets such a call run;
/// `read_limit` is the recording's `read_timeout` ([`knowable::read_limit`](super::knowable::read_limit)).
pub(crate) fn replay(
    settings: &SystemSettings,
    calls: &[Call],
    actions: &[(u64, ManualAction)],
    (options, choice): (&Arc<[Options]>, Choice),
    read_limit: Option<Duration>,
) -> Replay {
    replay_with(
        settings,
        (calls, actions),
        (options, choice),
        read_limit,
        Extras::default(),
    )
}

impl Replay {
    /// Replays scripted `calls` (in start order) through a fresh guard of `settings`,
    /// on a runtime of its own with a paused clock: a scripted upstream's answers. A
    /// call with an outcome is answered so after its duration; the calls without one
    /// ([`Recorded::Rejected`]) are answered in the order the replayed guard lets them
    /// run (never before: one it refuses is never asked): the n-th asked fails
    /// ([`Recorded::Failure`]) where `fails[n]` is true, and succeeds past its end, each
    /// after its own duration. With `retry_after`, every failing answer carries that
    /// `Retry-After` (an upstream answering 429). Each call's
    /// [`times`](Replay::times) are kept.
    pub fn scripted(
        settings: &SystemSettings,
        calls: &[Call],
        fails: Vec<bool>,
        retry_after: Option<Duration>,
    ) -> Replay {
        let options: Arc<[Options]> = calls
            .iter()
            .filter(|c| c.outcome == Recorded::Rejected)
            .map(|c| Options {
                success: (Recorded::Success, c.duration),
                failing: (Recorded::Failure, c.duration),
                estimate_fails: false,
                gap: 0,
            })
            .collect();
        let extras = Extras {
            retry_after,
            timed: true,
        };
        replay_with(
            settings,
            (calls, &[]),
            (&options, Choice::Path(fails)),
            None,
            extras,
        )
    }
}

/// A replay's runtime: current-thread, its clock paused.
///
/// # Panics
///
/// Where the operating system cannot give it its thread-local clock (tokio's
/// current-thread runtime fails to build).
pub(crate) fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with a paused clock builds")
}

/// `replay`, with `extras`.
///
/// # Panics
///
/// Where the operating system cannot give the replay's runtime its thread-local
/// clock (tokio's current-thread runtime fails to build).
pub(crate) fn replay_with(
    settings: &SystemSettings,
    (calls, actions): (&[Call], &[(u64, ManualAction)]),
    (options, choice): (&Arc<[Options]>, Choice),
    read_limit: Option<Duration>,
    extras: Extras,
) -> Replay {
    let runtime = paused_runtime();
    let unknowns = Arc::new(Mutex::new(Unknowns {
        options: options.clone(),
        choice,
        asked: vec![None; options.len()],
        decisions: 0,
    }));
    // The driver polls every call itself: tokio's budget per task would otherwise have
    // the calls of a busy instant return `Pending` to it forever.
    let mut replay = runtime.block_on(tokio::task::unconstrained(drive(
        settings,
        (calls, actions),
        &unknowns,
        read_limit,
        extras,
    )));
    if let Ok(mut unknowns) = unknowns.lock() {
        replay.asked = std::mem::take(&mut unknowns.asked);
        replay.decisions = unknowns.decisions;
    }
    replay
}

/// The ends of the replayed calls that are running, each at its exact instant.
///
/// tokio's timers fire on whole milliseconds (a deadline is rounded up to the next
/// one), so a call that slept its recorded duration, or was started by a timer at its
/// recorded start, would move up to a millisecond later: enough to turn a call the live
/// breaker refused just before its open period ended into a half-open trial. Instead
/// the replay moves the paused clock itself, to each start and end to the microsecond:
/// a running call waits here for its end ([`Ends::wait`]) and the driver wakes it
/// when the clock reaches it.
#[derive(Default)]
pub(crate) struct Ends {
    pending: Mutex<BinaryHeap<End>>,
    /// Numbers the ends, so that two at the same instant wake in the order they began.
    seq: AtomicU64,
}

struct End {
    at: Instant,
    seq: u64,
    wake: oneshot::Sender<()>,
}

impl PartialEq for End {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for End {}

impl PartialOrd for End {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for End {
    /// The earliest first in a [`BinaryHeap`] (a max-heap).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl Ends {
    /// Waits `duration` of the replay's clock from now, ended by the driver at the
    /// exact instant.
    pub(crate) async fn wait(&self, duration: Duration) {
        if duration.is_zero() {
            return;
        }
        self.until(Instant::now() + duration).await;
    }

    /// Waits until `at` on the replay's clock, woken by the driver after every end
    /// due then that began to wait before, even if `at` is now.
    pub(crate) async fn until(&self, at: Instant) {
        let (wake, woken) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            let seq = self.seq.fetch_add(1, Ordering::Relaxed);
            pending.push(End { at, seq, wake });
        }
        let _ = woken.await;
    }

    /// The earliest end waiting.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.pending.lock().ok()?.peek().map(|e| e.at)
    }

    /// Wakes every call whose end is `now` or before.
    pub(crate) fn wake_due(&self, now: Instant) {
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        while pending.peek().is_some_and(|e| e.at <= now) {
            if let Some(end) = pending.pop() {
                let _ = end.wake.send(());
            }
        }
    }
}

/// The replay's calls, each a future the driver polls itself (no task of its own, so no
/// trip through tokio's scheduler per call): polled when woken, at the instant the
/// clock shows, before the clock moves on ([`settle`](Running::settle)).
pub(crate) struct Running<'a> {
    calls: FuturesUnordered<Pin<Box<dyn Future<Output = ()> + 'a>>>,
    woke: Arc<Woke>,
    waker: Waker,
}

/// Whether a call was woken since the driver last looked, and the driver's task to
/// wake for it (a guard's timer firing while the driver waits).
#[derive(Default)]
struct Woke {
    flag: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wake for Woke {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::Release);
        if let Ok(task) = self.task.lock() {
            if let Some(task) = task.as_ref() {
                task.wake_by_ref();
            }
        }
    }
}

impl<'a> Running<'a> {
    pub(crate) fn new() -> Running<'a> {
        let woke = Arc::new(Woke::default());
        Running {
            calls: FuturesUnordered::new(),
            waker: Waker::from(woke.clone()),
            woke,
        }
    }

    pub(crate) fn push(&mut self, call: impl Future<Output = ()> + 'a) {
        self.calls.push(Box::pin(call));
        self.woke.flag.store(true, Ordering::Release);
    }

    /// Polls every call woken, and every call those polls wake, until none is: however
    /// long the chain of wakes, all at the instant the clock shows.
    pub(crate) fn settle(&mut self) {
        let mut cx = Context::from_waker(&self.waker);
        while self.woke.flag.swap(false, Ordering::AcqRel) {
            while let Poll::Ready(Some(())) = self.calls.poll_next_unpin(&mut cx) {}
        }
    }

    /// Ready once a call is woken (a guard's timer fired).
    pub(crate) fn woken(&self) -> impl Future<Output = ()> + use<'_, 'a> {
        std::future::poll_fn(|cx| {
            if let Ok(mut task) = self.woke.task.lock() {
                if !task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                    *task = Some(cx.waker().clone());
                }
            }
            if self.woke.flag.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

/// How late one of a replayed guard's timers may fire (µs): tokio's clock moves in
/// whole milliseconds to the next timer, so it lands up to 2 ms past a timer's instant
/// (its deadline rounded up, plus the clock's fraction of a millisecond); with a
/// margin. [`toward`] stops short of a step by the 2 ms.
pub(crate) const TIMER_SLACK: u64 = 3_000;

/// Moves the paused clock forward to `at` exactly, firing on the way the guard's own
/// timers (its timeouts and slow-call alarms, on whole milliseconds) in order; returns
/// early when a call starts to wait for an end, which may come before `at`. `timer` is
/// the driver's one timer, reset for each step.
///
/// `quiet_until`: no timer of the guard's is due before it (`None`: none at all); a step
/// that ends sooner than that by [`TIMER_SLACK`] moves the clock at once.
pub(crate) async fn toward(
    ends: &Ends,
    running: &mut Running<'_>,
    mut timer: Pin<&mut Sleep>,
    (now, at): (Instant, Instant),
    quiet_until: Option<Instant>,
) {
    if at <= now {
        return;
    }
    // The calls started or woken now run first, at this instant: one may start to wait
    // for an end before `at`.
    running.settle();
    if ends.next().is_some_and(|end| end < at) {
        return;
    }
    let quiet = quiet_until.is_none_or(|q| at + Duration::from_micros(TIMER_SLACK) < q);
    // tokio's clock moves by itself to the next timer (this one, or an earlier one of
    // the guard's) and lands up to 2 ms past it (`TIMER_SLACK`): a timer 2 ms short of
    // `at` never takes it past `at`. Where no timer of the guard's can be due, the
    // clock moves at once.
    if let Some(early) = at
        .checked_sub(Duration::from_millis(2))
        .filter(|e| *e > now && !quiet)
    {
        timer.as_mut().reset(early);
        tokio::select! {
            biased;
            // A guard's timer fired: its call runs now, and the driver looks again.
            () = running.woken() => {
                running.settle();
                return;
            }
            () = timer.as_mut() => {}
        }
        running.settle();
        if ends.next().is_some_and(|end| end < at) {
            return;
        }
    }
    tokio::time::advance(at - Instant::now().min(at)).await;
}

/// The calls started and maybe still running, in the order they started, for when the
/// guard's next timer may be due.
pub(crate) struct Started {
    calls: VecDeque<(Instant, usize)>,
    /// The guard's timers (a call's slow-call alarm and timeout, a bulkhead's wait)
    /// fire no sooner than this after their call started.
    horizon: Duration,
}

impl Started {
    pub(crate) fn new(settings: &SystemSettings) -> Started {
        let horizon = [
            settings.cb_slow_threshold(),
            settings.total_timeout(),
            settings.bulkhead_wait(),
        ]
        .into_iter()
        .filter(|d| !d.is_zero())
        .min()
        .unwrap_or(Duration::MAX);
        Started {
            calls: VecDeque::new(),
            horizon,
        }
    }

    /// Call `index` started `at` (no sooner than the last one pushed).
    pub(crate) fn push(&mut self, at: Instant, index: usize) {
        self.calls.push_back((at, index));
    }

    /// No timer of the guard's is due before this: the earliest started call still
    /// running (not `done`) is younger than the horizon until then. `None`: none
    /// running, or its timers beyond the clock's reach.
    pub(crate) fn quiet_until(&mut self, done: impl Fn(usize) -> bool) -> Option<Instant> {
        while self.calls.front().is_some_and(|(_, i)| done(*i)) {
            self.calls.pop_front();
        }
        self.calls
            .front()
            .and_then(|(t, _)| t.checked_add(self.horizon))
    }
}

/// The seed of every replayed breaker's jitter (`cb_open_jitter`).
const JITTER_SEED: u64 = 0x005E_ED0F_0A33;

/// What every replayed call task shares: the guard, the ends to wait for, and where
/// each call's fate goes.
struct Calls {
    guard: Guard,
    client: Client,
    unknowns: Arc<Mutex<Unknowns>>,
    ends: Arc<Ends>,
    fates: Arc<[AtomicU8]>,
    /// Calls not yet done.
    running: Arc<AtomicUsize>,
    /// The `Retry-After` of every failing answer, if any.
    retry_after: Option<Duration>,
    /// When each call was answered and its upstream call began (µs since `origin`),
    /// kept if asked for.
    times: Option<Arc<[(AtomicU64, AtomicU64)]>>,
    origin: Instant,
}

impl Calls {
    /// Starts call `index` among `calls`, now (it runs at the next settle, at this
    /// instant); `unknown` numbers the calls without a recorded outcome so far (this
    /// one, if it is one, is the next).
    fn start(&self, calls: &mut Running<'_>, index: usize, call: &Call, unknown: &mut usize) {
        let call_upstream = if call.outcome == Recorded::Rejected {
            *unknown += 1;
            Answering::Unknown(self.unknowns.clone(), *unknown - 1, self.client)
        } else {
            Answering::Known(answer(call.outcome, call.duration, self.client))
        };
        let (guard, fates, running, ends) = (
            self.guard.clone(),
            self.fates.clone(),
            self.running.clone(),
            self.ends.clone(),
        );
        let (times, origin, hint) = (self.times.clone(), self.origin, self.retry_after);
        let since =
            move || u64::try_from((Instant::now() - origin).as_micros()).unwrap_or(u64::MAX);
        running.fetch_add(1, Ordering::Relaxed);
        calls.push(async move {
            let ran = || {
                if let Some(times) = &times {
                    times[index].1.store(since(), Ordering::Relaxed);
                }
            };
            let fate = one(&guard, &ends, (call_upstream, hint), ran).await;
            if let Some(times) = &times {
                times[index].0.store(since(), Ordering::Relaxed);
            }
            fates[index].store(fate as u8, Ordering::Relaxed);
            running.fetch_sub(1, Ordering::Relaxed);
        });
    }

    /// Each call's times, if kept, once every call is done.
    fn times(&self) -> Vec<(u64, u64)> {
        self.times.as_ref().map_or_else(Vec::new, |times| {
            times
                .iter()
                .map(|(end, ran)| (end.load(Ordering::Relaxed), ran.load(Ordering::Relaxed)))
                .collect()
        })
    }

    /// Each call's fate, once every task is done.
    fn fates(&self) -> Vec<Fate> {
        self.fates
            .iter()
            .map(|f| Fate::from_u8(f.load(Ordering::Relaxed)))
            .collect()
    }
}

/// `n` calls' times, none set yet.
fn unset(n: usize) -> Arc<[(AtomicU64, AtomicU64)]> {
    (0..n)
        .map(|_| (AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)))
        .collect()
}

/// A fresh guard of `settings` for a replay, reporting to `observers` (its transitions).
pub(crate) fn replayed_guard(settings: &SystemSettings, observers: &[Arc<dyn Observer>]) -> Guard {
    let guard = observers
        .iter()
        .fold(Guard::builder(settings), |builder, o| {
            builder.observer(o.clone())
        })
        .build();
    // Observe mode is replayed as `auto`: what the breaker would have refused.
    guard.breaker().act(ManualAction::Enforce);
    // A breaker draws its jitter from a generator seeded at random; the recording does
    // not say what the live one drew. Every replay draws the same, so that it repeats
    // itself and the ways it walks differ only in their answers.
    guard.breaker().seed_jitter(JITTER_SEED);
    guard
}

/// The one drive loop: the clock moved to each call's start, each operator's action and
/// each end in turn (at one instant, the ends first, then the actions, then the
/// starts), until every call is done.
async fn drive(
    settings: &SystemSettings,
    (calls, actions): (&[Call], &[(u64, ManualAction)]),
    unknowns: &Arc<Mutex<Unknowns>>,
    read_limit: Option<Duration>,
    extras: Extras,
) -> Replay {
    let transitions = Arc::new(Transitions::default());
    let observer: Arc<dyn Observer> = transitions.clone();
    let origin = Instant::now();
    let tasks = Calls {
        guard: replayed_guard(settings, &[observer]),
        client: Client::new(settings.read_timeout(), read_limit),
        unknowns: unknowns.clone(),
        ends: Arc::new(Ends::default()),
        fates: (0..calls.len()).map(|_| AtomicU8::new(0)).collect(),
        running: Arc::new(AtomicUsize::new(0)),
        retry_after: extras.retry_after,
        times: extras.timed.then(|| unset(calls.len())),
        origin,
    };
    let ends = &tasks.ends;
    let (mut unknown, mut next_call) = (0, 0);
    let mut actions = actions.iter().peekable();
    let timer = sleep(Duration::ZERO);
    tokio::pin!(timer);
    let at = |micros: u64| origin + Duration::from_micros(micros);
    let mut started = Started::new(settings);
    let mut running = Running::new();
    loop {
        // The calls woken while the clock moved (a guard's timer fired) run first.
        running.settle();
        let start = calls.get(next_call).map(|c| at(c.start));
        let action = actions.peek().map(|(micros, _)| at(*micros));
        let end = ends.next();
        let Some(next) = [start, action, end].into_iter().flatten().min() else {
            if tasks.running.load(Ordering::Relaxed) == 0 {
                break;
            }
            // Only calls the guard's own timers end (a hang cut at `total_timeout`, a
            // bulkhead's wait), or that wait for a permit and then run.
            tokio::select! {
                biased;
                () = running.woken() => {}
                () = sleep(Duration::from_secs(1)) => {}
            }
            continue;
        };
        let now = Instant::now();
        if next > now {
            let quiet_until = started
                .quiet_until(|i| tasks.fates[i].load(Ordering::Relaxed) != Fate::Pending as u8);
            toward(ends, &mut running, timer.as_mut(), (now, next), quiet_until).await;
        } else if end.is_some_and(|e| e <= now) {
            ends.wake_due(now);
            running.settle();
        } else if action.is_some_and(|a| a <= now) {
            if let Some((_, act)) = actions.next() {
                tasks.guard.breaker().act(*act);
            }
        } else {
            tasks.start(&mut running, next_call, &calls[next_call], &mut unknown);
            started.push(now, next_call);
            next_call += 1;
        }
    }
    Replay {
        fates: tasks.fates(),
        transitions: replayed(&transitions, origin),
        asked: Vec::new(),
        decisions: 0,
        times: tasks.times(),
        calls: Vec::new(),
        limits: Vec::new(),
    }
}

/// The transitions seen, each at its µs since `origin`.
pub(crate) fn replayed(transitions: &Transitions, origin: Instant) -> Vec<BreakerTransition> {
    transitions
        .seen()
        .into_iter()
        .map(|m| BreakerTransition {
            at: u64::try_from(m.at.saturating_duration_since(origin).as_micros())
                .unwrap_or(u64::MAX),
            from: m.from,
            to: m.to,
            open: m.open,
            why: m.why,
            guessed: false,
        })
        .collect()
}

/// A replayed call's upstream: its recorded answer, or one asked for when it runs.
enum Answering {
    Known(Answer),
    /// The `usize`-th call without a recorded outcome, seen by this client.
    Unknown(Arc<Mutex<Unknowns>>, usize, Client),
}

/// The upstream of one call: answers after its duration, or never.
/// The upstream of one call: answers after its duration (an error with `hint`, its
/// `Retry-After`), or never.
async fn upstream(
    ends: &Ends,
    answer: Answer,
    hint: Option<Duration>,
) -> Result<(), Option<Duration>> {
    match answer {
        Answer::Ok(d) => {
            ends.wait(d).await;
            Ok(())
        }
        Answer::Err(d) => {
            ends.wait(d).await;
            Err(hint)
        }
        Answer::Hang | Answer::Abandon(_) => std::future::pending().await,
    }
}

/// `upstream` through the guard, reading each failing answer's `Retry-After` where
/// `hinted`: why it failed, if it did.
async fn guarded<F>(guard: &Guard, hinted: bool, upstream: F) -> Option<Cause>
where
    F: Future<Output = Result<(), Option<Duration>>>,
{
    let result = if hinted {
        let options = CallOptions::new().retry_after(|hint: &Option<Duration>| *hint);
        guard.call_judged(options, upstream).await
    } else {
        guard.call(upstream).await
    };
    result.err().map(|e| *e.cause())
}

/// One call through the guard, and its fate; `ran` is told when its upstream call
/// begins.
async fn one(
    guard: &Guard,
    ends: &Ends,
    (call, hint): (Answering, Option<Duration>),
    ran: impl FnOnce(),
) -> Fate {
    let cause = match call {
        Answering::Known(Answer::Abandon(d)) => {
            let call = guarded(guard, false, async {
                ran();
                std::future::pending().await
            });
            tokio::select! {
                biased;
                cause = call => cause,
                // The caller gave up: it ran, unless it was still waiting for a permit.
                () = ends.wait(d) => return Fate::Ran,
            }
        }
        Answering::Known(known) => {
            guarded(guard, hint.is_some(), async move {
                ran();
                upstream(ends, known, hint).await
            })
            .await
        }
        Answering::Unknown(unknowns, index, client) => {
            guarded(guard, hint.is_some(), async move {
                ran();
                // Asked only now, as it runs: a refused call is never asked.
                let (outcome, duration) = match unknowns.lock() {
                    Ok(mut unknowns) => unknowns.ask(index),
                    Err(_) => (Recorded::Success, 0),
                };
                upstream(ends, answer(outcome, duration, client), hint).await
            })
            .await
        }
    };
    match cause {
        None | Some(Cause::Timeout { .. } | Cause::Slow { .. }) => Fate::Ran,
        Some(Cause::BulkheadFull { .. }) => Fate::BulkheadFull,
        Some(_) => Fate::Refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of calls, each woken by the one before it, all at one instant: `settle`
    /// returns only once the last has run, however long the chain.
    #[test]
    fn settle_runs_every_call_a_wake_leads_to() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut running = Running::new();
            let ran = Arc::new(AtomicUsize::new(0));
            let (first, mut next) = oneshot::channel::<()>();
            for _ in 0..20 {
                let (tell, wait) = oneshot::channel::<()>();
                let ran = ran.clone();
                running.push(async move {
                    let _ = next.await;
                    ran.fetch_add(1, Ordering::SeqCst);
                    let _ = tell.send(());
                });
                next = wait;
            }
            running.settle();
            assert_eq!(
                ran.load(Ordering::SeqCst),
                0,
                "each waits for the one before"
            );
            let _ = first.send(());
            running.settle();
            assert_eq!(ran.load(Ordering::SeqCst), 20);
            assert!(running.calls.is_empty());
            drop(next);
        });
    }
}
