//! Property test: random sequences of admissions, outcomes, cancellations, time steps,
//! operator actions and batches of concurrent admissions held open, driven against the
//! real `Breaker` and against a simple sequential reference model of the spec written
//! here. State, counts, trials, rejections and transitions must agree after every step.

use outbound_guard::Verdict;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{
    Breaker, BreakerPermit, Cause, Guard, Observer, Settings, State, Transition, Trials,
};
use proptest::prelude::*;

const OPEN_SECS: u64 = 10;
const OPEN_NANOS: u64 = OPEN_SECS * 1_000_000_000;
/// `cb_open_max` of a run that backs off: four doublings of `OPEN_SECS` reach it.
const MAX_SECS: u64 = 8 * OPEN_SECS;

#[derive(Debug, Clone, Copy)]
struct Config {
    window: usize,
    min_calls: usize,
    /// The failure-rate threshold in percent.
    rate_pct: usize,
    trials: u32,
    /// `cb_open_backoff = 2.0` (and `cb_open_max = MAX_SECS`), or the guide's fixed
    /// open period.
    backoff: bool,
}

#[derive(Debug, Clone)]
enum Op {
    Admit,
    /// Admit `n` calls and hold them all open.
    AdmitMany(usize),
    /// Record the outcome of the held call at `index % held`.
    Record(usize, bool),
    /// Record the most recently admitted held call: with the others still held, this
    /// ends a half-open cycle while older permits outlive it.
    RecordNewest(bool),
    /// Drop the oldest held call unrecorded: often one from an earlier state.
    CancelOldest,
    /// Record every held call, oldest first.
    RecordAll(bool),
    /// Drop the held call at `index % held` unrecorded.
    Cancel(usize),
    AdvanceMs(u64),
    Reset,
    ForceOpen,
    Disable,
    /// `n` calls admitted and recorded one after the other, every `fail_every`-th one
    /// (if not 0) a failure: fills large windows and reaches large `cb_min_calls`.
    Burst(usize, usize),
    /// `n` threads ask for admission at the same instant and hold what they get: the
    /// breaker must admit exactly as many, and refuse the rest for the same causes, as
    /// `n` admissions one after the other.
    Concurrent(usize),
}

/// The spec, sequentially and plainly.
#[derive(Debug, Clone, Copy, PartialEq)]
enum MState {
    Closed,
    Open { until: u64 },
    HalfOpen { admitted: u32, succeeded: u32 },
    ForcedOpen,
    Disabled,
}

/// Which state instance a call was admitted in ("epoch": one per state entered), and
/// whether it was a trial.
#[derive(Debug, Clone, Copy)]
struct MTicket {
    epoch: u64,
    trial: bool,
}

struct Model {
    cfg: Config,
    state: MState,
    epoch: u64,
    /// The last `window` outcomes, oldest first; `true` is a failure.
    last: Vec<bool>,
    now: u64,
    transitions: Vec<(State, State)>,
    /// While open: `(failures, outcomes)` that tripped it, which readings show.
    tripped: Option<(u32, u32)>,
    /// The last opening's length: a re-opening after a failed trial doubles it when the
    /// run backs off.
    period: u64,
}

impl Model {
    fn new(cfg: Config) -> Self {
        Model {
            cfg,
            state: MState::Closed,
            epoch: 0,
            last: Vec::new(),
            now: 0,
            transitions: Vec::new(),
            tripped: None,
            period: OPEN_NANOS,
        }
    }

    fn kind(&self) -> State {
        match self.state {
            MState::Closed => State::Closed,
            MState::Open { .. } => State::Open,
            MState::HalfOpen { .. } => State::HalfOpen,
            MState::ForcedOpen => State::ForcedOpen,
            MState::Disabled => State::Disabled,
        }
    }

    fn enter(&mut self, to: MState) {
        let from = self.kind();
        self.state = to;
        self.epoch += 1;
        self.last.clear();
        self.tripped = None;
        self.transitions.push((from, self.kind()));
    }

    fn admit(&mut self) -> Result<MTicket, Cause> {
        match self.state {
            MState::Closed | MState::Disabled => Ok(MTicket {
                epoch: self.epoch,
                trial: false,
            }),
            MState::ForcedOpen => Err(Cause::ForcedOpen),
            MState::Open { until } if self.now < until => Err(Cause::Open {
                retry_after: Duration::from_nanos(until - self.now),
            }),
            MState::Open { .. } => {
                self.enter(MState::HalfOpen {
                    admitted: 1,
                    succeeded: 0,
                });
                Ok(MTicket {
                    epoch: self.epoch,
                    trial: true,
                })
            }
            MState::HalfOpen {
                ref mut admitted, ..
            } => {
                if *admitted < self.cfg.trials {
                    *admitted += 1;
                    Ok(MTicket {
                        epoch: self.epoch,
                        trial: true,
                    })
                } else {
                    Err(Cause::HalfOpenFull {
                        trials: self.cfg.trials,
                    })
                }
            }
        }
    }

    fn record(&mut self, ticket: MTicket, failed: bool) {
        if ticket.epoch != self.epoch {
            return; // belongs to an earlier state
        }
        match self.state {
            MState::Closed => {
                self.last.push(failed);
                if self.last.len() > self.cfg.window {
                    self.last.remove(0);
                }
                let calls = self.last.len();
                let failures = self.last.iter().filter(|f| **f).count();
                if calls >= self.cfg.min_calls && failures * 100 >= self.cfg.rate_pct * calls {
                    // From closed: the plain open period, whatever came before.
                    self.period = OPEN_NANOS;
                    self.enter(MState::Open {
                        until: self.now + OPEN_NANOS,
                    });
                    self.tripped = Some((failures as u32, calls as u32));
                }
            }
            MState::HalfOpen {
                admitted,
                succeeded,
            } if ticket.trial => {
                if failed {
                    if self.cfg.backoff {
                        self.period = (self.period * 2).min(MAX_SECS * 1_000_000_000);
                    }
                    self.enter(MState::Open {
                        until: self.now + self.period,
                    });
                    self.tripped = Some((1, succeeded + 1));
                } else if succeeded + 1 == self.cfg.trials {
                    self.enter(MState::Closed);
                } else {
                    self.state = MState::HalfOpen {
                        admitted,
                        succeeded: succeeded + 1,
                    };
                }
            }
            _ => {}
        }
    }

    fn cancel(&mut self, ticket: MTicket) {
        if let MState::HalfOpen {
            admitted,
            succeeded,
        } = self.state
        {
            if ticket.trial && ticket.epoch == self.epoch {
                self.state = MState::HalfOpen {
                    admitted: admitted - 1,
                    succeeded,
                };
            }
        }
    }

    /// A reading of an open breaker that is due: half-open, no trial admitted yet.
    fn settle(&mut self) {
        if let MState::Open { until } = self.state {
            if self.now >= until {
                self.enter(MState::HalfOpen {
                    admitted: 0,
                    succeeded: 0,
                });
            }
        }
    }

    fn force_open(&mut self) {
        if self.state != MState::ForcedOpen {
            self.enter(MState::ForcedOpen);
        }
    }

    fn disable(&mut self) {
        if self.state != MState::Disabled {
            self.enter(MState::Disabled);
        }
    }

    /// Closed with an empty window from any state. A closed breaker forgets its
    /// window without a transition, and calls admitted before do not count afterwards,
    /// whatever the window held.
    fn reset(&mut self) {
        if self.state == MState::Closed {
            self.last.clear();
            self.epoch += 1;
        } else {
            self.enter(MState::Closed);
        }
    }
}

#[derive(Default)]
struct Recorder(Mutex<Vec<(State, State)>>);

impl Observer for Recorder {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.from, t.to));
    }
}

fn check(breaker: &Breaker, model: &mut Model, recorder: &Recorder, step: usize, op: &Op) {
    let snap = breaker.snapshot();
    model.settle();
    let model = &*model;
    let ctx = || format!("after step {step} ({op:?}); model {:?}", model.state);
    assert_eq!(snap.state, model.kind(), "state {}", ctx());
    assert_eq!(breaker.state(), model.kind(), "state() {}", ctx());
    let (failures, calls) = model.tripped.unwrap_or((
        model.last.iter().filter(|f| **f).count() as u32,
        model.last.len() as u32,
    ));
    assert_eq!(
        (snap.failures, snap.calls),
        (failures, calls),
        "window {}",
        ctx()
    );
    let expected_rate = if calls == 0 {
        0.0
    } else {
        f64::from(failures) / f64::from(calls)
    };
    assert_eq!(snap.failure_rate, expected_rate, "rate {}", ctx());
    let trials = match model.state {
        MState::HalfOpen {
            admitted,
            succeeded,
        } => Trials {
            admitted,
            succeeded,
        },
        _ => Trials::default(),
    };
    assert_eq!(snap.trials, trials, "trials {}", ctx());
    let retry = match model.state {
        MState::Open { until } => Some(Duration::from_nanos(until.saturating_sub(model.now))),
        _ => None,
    };
    assert_eq!(snap.retry_after, retry, "retry_after {}", ctx());
    assert_eq!(
        recorder.0.lock().unwrap().as_slice(),
        model.transitions.as_slice(),
        "transitions {}",
        ctx()
    );
}

fn admit<'b>(breaker: &'b Breaker, model: &mut Model) -> Option<(BreakerPermit<'b>, MTicket)> {
    match (breaker.try_acquire(), model.admit()) {
        (Ok(permit), Ok(ticket)) => Some((permit, ticket)),
        (Err(e), Err(cause)) => {
            assert_eq!(*e.cause(), cause, "rejection cause");
            None
        }
        (real, expected) => panic!(
            "admission differs: breaker {:?}, model {expected:?} in {:?}",
            real.map(|_| "admitted"),
            model.state
        ),
    }
}

/// `n` admissions at once, on `n` threads that share the runtime's (paused) clock.
fn admit_concurrently<'b>(
    breaker: &'b Breaker,
    model: &mut Model,
    n: usize,
) -> Vec<(BreakerPermit<'b>, MTicket)> {
    let handle = tokio::runtime::Handle::current();
    let answers: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let handle = handle.clone();
                scope.spawn(move || {
                    let _clock = handle.enter();
                    breaker.try_acquire().map_err(|e| *e.cause())
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    // Admissions at one instant commute: compare them as a multiset with the model's.
    let expected: Vec<_> = (0..n).map(|_| model.admit()).collect();
    let mut tickets = Vec::new();
    let mut refused = Vec::new();
    for answer in &expected {
        match answer {
            Ok(ticket) => tickets.push(*ticket),
            Err(cause) => refused.push(*cause),
        }
    }
    let mut permits = Vec::new();
    let mut real_refused = Vec::new();
    for answer in answers {
        match answer {
            Ok(permit) => permits.push(permit),
            Err(cause) => real_refused.push(cause),
        }
    }
    assert_eq!(
        (permits.len(), &real_refused),
        (tickets.len(), &refused),
        "{n} concurrent admissions in {:?}",
        model.state
    );
    // Every ticket of one instant is alike (same state, trial or not).
    permits.into_iter().zip(tickets).collect()
}

fn run(cfg: Config, ops: Vec<Op>) {
    let toml = format!(
        "[systems.sber]\ncb_window_size = {}\ncb_min_calls = {}\ncb_failure_rate = {}\ncb_half_open_calls = {}\ncb_open_duration = {OPEN_SECS}\n{}",
        cfg.window,
        cfg.min_calls,
        cfg.rate_pct as f64 / 100.0,
        cfg.trials,
        if cfg.backoff {
            format!("cb_open_backoff = 2.0\ncb_open_max = {MAX_SECS}\n")
        } else {
            String::new()
        }
    );
    let settings = Settings::parse(&toml, "inline").unwrap();
    let system = settings.system("sber").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let recorder = Arc::new(Recorder::default());
        let guard = Guard::builder(system).observer(recorder.clone()).build();
        let breaker = guard.breaker();
        let mut model = Model::new(cfg);
        let mut held: Vec<(BreakerPermit<'_>, MTicket)> = Vec::new();
        check(breaker, &mut model, &recorder, 0, &Op::Reset);

        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Admit => held.extend(admit(breaker, &mut model)),
                Op::AdmitMany(n) => {
                    for _ in 0..n {
                        held.extend(admit(breaker, &mut model));
                    }
                }
                Op::Record(i, failed) => {
                    if !held.is_empty() {
                        let (permit, ticket) = held.remove(i % held.len());
                        permit.finish(Verdict::new(failed));
                        model.record(ticket, failed);
                    }
                }
                Op::RecordNewest(failed) => {
                    if let Some((permit, ticket)) = held.pop() {
                        permit.finish(Verdict::new(failed));
                        model.record(ticket, failed);
                    }
                }
                Op::CancelOldest => {
                    if !held.is_empty() {
                        let (permit, ticket) = held.remove(0);
                        drop(permit);
                        model.cancel(ticket);
                    }
                }
                Op::RecordAll(failed) => {
                    for (permit, ticket) in held.drain(..) {
                        if failed {
                            permit.finish(Verdict::FAILURE);
                        } else {
                            permit.finish(Verdict::SUCCESS);
                        }
                        model.record(ticket, failed);
                    }
                }
                Op::Cancel(i) => {
                    if !held.is_empty() {
                        let (permit, ticket) = held.remove(i % held.len());
                        drop(permit);
                        model.cancel(ticket);
                    }
                }
                Op::AdvanceMs(ms) => {
                    tokio::time::advance(Duration::from_millis(ms)).await;
                    model.now += ms * 1_000_000;
                }
                Op::Reset => {
                    breaker.act(outbound_guard::ManualAction::Reset);
                    model.reset();
                }
                Op::ForceOpen => {
                    breaker.act(outbound_guard::ManualAction::ForceOpen);
                    model.force_open();
                }
                Op::Disable => {
                    breaker.act(outbound_guard::ManualAction::Disable);
                    model.disable();
                }
                Op::Burst(n, fail_every) => {
                    for i in 1..=n {
                        let failed = fail_every != 0 && i % fail_every == 0;
                        if let Some((permit, ticket)) = admit(breaker, &mut model) {
                            permit.finish(Verdict::new(failed));
                            model.record(ticket, failed);
                        }
                    }
                }
                Op::Concurrent(n) => held.extend(admit_concurrently(breaker, &mut model, n)),
            }
            check(breaker, &mut model, &recorder, step + 1, op);
        }
        // Whatever is still held is dropped unrecorded: no change but returned trial slots.
        for (permit, ticket) in held.drain(..) {
            drop(permit);
            model.cancel(ticket);
            check(
                breaker,
                &mut model,
                &recorder,
                ops.len() + 1,
                &Op::Cancel(0),
            );
        }
    });
}

fn config() -> impl Strategy<Value = Config> {
    // Small windows (every corner reached in a few steps), the middle, the guide's 50
    // above all, and beyond it; `cb_min_calls` anywhere up to the window (bursts fill
    // it); the guide's rates and any whole percent.
    prop_oneof![3 => 1usize..=8, 2 => 9usize..=49, 2 => Just(50usize), 1 => 51usize..=60]
        .prop_flat_map(|window| {
            (
                Just(window),
                prop_oneof![2 => 1..=window.min(8), 1 => 1..=window],
                prop_oneof![
                    2 => prop::sample::select(vec![20usize, 25, 30, 33, 50, 60, 66, 75, 100]),
                    1 => 1usize..=100,
                ],
                1u32..=5,
                any::<bool>(),
            )
        })
        .prop_map(|(window, min_calls, rate_pct, trials, backoff)| Config {
            window,
            min_calls,
            rate_pct,
            trials,
            backoff,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => Just(Op::Admit),
        2 => (1usize..6).prop_map(Op::AdmitMany),
        5 => (any::<usize>(), prop::bool::weighted(0.5)).prop_map(|(i, f)| Op::Record(i, f)),
        2 => prop::bool::weighted(0.3).prop_map(Op::RecordAll),
        2 => any::<usize>().prop_map(Op::Cancel),
        3 => prop::bool::weighted(0.6).prop_map(Op::RecordNewest),
        2 => Just(Op::CancelOldest),
        4 => prop_oneof![1 => Just(0u64), 2 => 1u64..3_000, 1 => Just(OPEN_SECS * 1000 - 1), 3 => Just(OPEN_SECS * 1000), 2 => 3_000u64..12_000]
            .prop_map(Op::AdvanceMs),
        1 => Just(Op::Reset),
        1 => Just(Op::ForceOpen),
        1 => Just(Op::Disable),
        2 => (1usize..=60, prop_oneof![Just(0usize), 1usize..=4]).prop_map(|(n, f)| Op::Burst(n, f)),
        1 => (2usize..=6).prop_map(Op::Concurrent),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn breaker_agrees_with_the_reference_model(cfg in config(), ops in prop::collection::vec(op(), 1..120)) {
        run(cfg, ops);
    }
}

/// A hand-written sequence that walks through every state, so that the model itself is
/// known to reach them (a model that never opened would agree with a breaker that never
/// opened).
#[test]
fn the_model_reaches_every_state() {
    let cfg = Config {
        window: 4,
        min_calls: 2,
        rate_pct: 50,
        trials: 2,
        backoff: false,
    };
    let mut ops = vec![Op::AdmitMany(3), Op::Record(0, true), Op::Record(0, true)];
    ops.extend([
        Op::AdvanceMs(OPEN_SECS * 1000),
        Op::AdmitMany(3),
        Op::Cancel(0),
        Op::Admit,
        Op::RecordAll(false),
        Op::Admit,
        Op::ForceOpen,
        Op::Disable,
        Op::RecordAll(true),
        Op::Reset,
    ]);
    run(cfg, ops.clone());
    let mut model = Model::new(cfg);
    let mut seen = vec![model.kind()];
    let a = model.admit().unwrap();
    let b = model.admit().unwrap();
    model.record(a, true);
    model.record(b, true);
    seen.push(model.kind());
    model.now += OPEN_NANOS;
    let t = model.admit().unwrap();
    seen.push(model.kind());
    model.record(t, false);
    let t = model.admit().unwrap();
    model.record(t, false);
    seen.push(model.kind());
    model.force_open();
    seen.push(model.kind());
    model.disable();
    seen.push(model.kind());
    assert_eq!(
        seen,
        [
            State::Closed,
            State::Open,
            State::HalfOpen,
            State::Closed,
            State::ForcedOpen,
            State::Disabled
        ]
    );
}

/// Sequences that reach the corners the random ones reach only now and then, checked
/// against the model the same way: permits that outlive their state.
#[test]
fn scripted_corners_agree_with_the_model() {
    use Op::*;
    let cfg = Config {
        window: 3,
        min_calls: 2,
        rate_pct: 50,
        trials: 2,
        backoff: false,
    };
    let open_ms = OPEN_SECS * 1000;
    let open = [AdmitMany(2), RecordAll(true)];
    let scripts: Vec<Vec<Op>> = vec![
        // A trial of a failed cycle is cancelled during the next cycle.
        [
            &open[..],
            &[AdvanceMs(open_ms), AdmitMany(2), RecordNewest(true)],
        ]
        .concat(),
        // … then the next cycle starts and the old trial is dropped or recorded.
        [
            &open[..],
            &[
                AdvanceMs(open_ms),
                AdmitMany(2),
                RecordNewest(true),
                AdvanceMs(open_ms),
                Admit,
                CancelOldest,
            ],
        ]
        .concat(),
        [
            &open[..],
            &[
                AdvanceMs(open_ms),
                AdmitMany(2),
                RecordNewest(true),
                AdvanceMs(open_ms),
                Admit,
                Record(0, false),
            ],
        ]
        .concat(),
        [
            &open[..],
            &[
                AdvanceMs(open_ms),
                AdmitMany(2),
                RecordNewest(true),
                AdvanceMs(open_ms),
                Admit,
                Record(0, true),
            ],
        ]
        .concat(),
        // A closed-state permit recorded or dropped during half-open and after closing.
        [
            &[Admit, Admit][..],
            &open[..],
            &[AdvanceMs(open_ms), Admit, Record(0, false), CancelOldest],
        ]
        .concat(),
        [
            &[Admit][..],
            &open[..],
            &[
                AdvanceMs(open_ms),
                AdmitMany(2),
                RecordNewest(false),
                RecordNewest(false),
                Record(0, true),
            ],
        ]
        .concat(),
        // Operator actions while permits are out.
        [&[
            AdmitMany(2),
            Reset,
            RecordAll(true),
            Admit,
            ForceOpen,
            RecordAll(true),
            Disable,
            Reset,
        ][..]]
        .concat(),
    ];
    for ops in scripts {
        run(cfg, ops);
    }
}
