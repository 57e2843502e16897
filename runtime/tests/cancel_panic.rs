//! Cancellation at each step of a guarded call (waiting for a bulkhead permit, holding a
//! half-open trial, mid-call, between the steps) and panics inside the call: every
//! permit comes back, nothing is recorded for a cancelled call, a panic is recorded as a
//! failure and keeps unwinding, and the breaker is never left stuck half-open. Plus the
//! bulkhead's bound and that its rejections are not the breaker's failures.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{CallEvent, CallOptions, Cause, Guard, Observer, Outcome, State, Trials};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{advance, sleep, timeout, Instant};

mod common;
use common::{system, MS, S};

#[derive(Default)]
struct Calls(Mutex<Vec<Outcome>>);

impl Observer for Calls {
    fn on_call(&self, call: &CallEvent<'_>) {
        assert_eq!(call.system, "sber");
        self.0.lock().unwrap().push(call.outcome);
    }
}

impl Calls {
    fn names(&self) -> Vec<&'static str> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(outbound_guard::Outcome::as_str)
            .collect()
    }
}

fn guard_with(extra: &str) -> (Guard, Arc<Calls>) {
    let calls = Arc::new(Calls::default());
    let guard = Guard::builder(&system(extra))
        .observer(calls.clone())
        .build();
    (guard, calls)
}

/// A gate the held calls wait on.
struct Gate(watch::Sender<bool>, watch::Receiver<bool>);

impl Gate {
    fn new() -> Self {
        let (tx, rx) = watch::channel(false);
        Gate(tx, rx)
    }

    fn wait(&self) -> impl Future<Output = Result<(), ()>> + Send + 'static {
        let mut rx = self.1.clone();
        async move {
            rx.wait_for(|open| *open).await.unwrap();
            Ok(())
        }
    }

    fn open(&self) {
        self.0.send(true).unwrap();
    }
}

type Answer = Result<Result<(), ()>, outbound_guard::CircuitBreakerError>;

/// A guarded call on its own task, held until `gate` opens.
fn held_call(guard: &Guard, gate: &Gate) -> JoinHandle<Answer> {
    let guard = guard.clone();
    let wait = gate.wait();
    tokio::spawn(async move { guard.call(wait).await })
}

/// Lets every spawned task run to its await point (paused time runs them first).
async fn settle() {
    sleep(MS).await;
}

async fn fail_n(guard: &Guard, n: usize) {
    for _ in 0..n {
        let r = guard.call(async { Err::<(), ()>(()) }).await;
        assert_eq!(r, Ok(Err(())));
    }
}

fn counts(guard: &Guard) -> (State, u32, u32) {
    let s = guard.breaker().snapshot();
    (s.state, s.failures, s.calls)
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_rejects_after_bulkhead_wait_and_the_breaker_does_not_count_it() {
    // Long timeouts, so that the held calls are not slow after 30 s of rejections.
    let (guard, calls) = guard_with("max_connections = 5\nread_timeout = 100\ntotal_timeout = 120");
    assert_eq!(guard.bulkhead_permits(), 4);
    assert_eq!(guard.settings().bulkhead_wait(), 2 * S);
    let gate = Gate::new();
    let held: Vec<_> = (0..4).map(|_| held_call(&guard, &gate)).collect();
    settle().await;
    assert_eq!(guard.in_flight(), 4);

    for _ in 0..15 {
        let start = Instant::now();
        let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
        assert_eq!(start.elapsed(), 2 * S, "waits exactly bulkhead_wait");
        assert_eq!(
            *err.cause(),
            Cause::BulkheadFull {
                permits: 4,
                waited: 2 * S
            }
        );
        assert!(err.is_rejection());
        assert_eq!(err.system(), "sber");
    }
    // Fifteen rejections, more than min calls: nothing counted, still closed.
    assert_eq!(counts(&guard), (State::Closed, 0, 0));
    assert_eq!(guard.in_flight(), 4);

    gate.open();
    for task in held {
        assert_eq!(task.await.unwrap(), Ok(Ok(())));
    }
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(counts(&guard), (State::Closed, 0, 4));
    let names = calls.names();
    assert_eq!(names.iter().filter(|n| **n == "rejected").count(), 15);
    assert_eq!(names.iter().filter(|n| **n == "success").count(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_waiting_caller_gets_a_permit_freed_within_the_bound() {
    let (guard, _) = guard_with("max_connections = 5");
    let gate = Gate::new();
    let held: Vec<_> = (0..3).map(|_| held_call(&guard, &gate)).collect();
    let last = {
        let guard = guard.clone();
        tokio::spawn(async move {
            guard
                .call(async {
                    sleep(S + 500 * MS).await;
                    Ok::<_, ()>(())
                })
                .await
        })
    };
    settle().await;
    assert_eq!(guard.in_flight(), 4);
    let start = Instant::now();
    let r = guard.call(async { Ok::<_, ()>(9) }).await;
    assert_eq!(r, Ok(Ok(9)));
    assert_eq!(
        start.elapsed(),
        1499 * MS,
        "waited until the permit was freed"
    );
    assert_eq!(last.await.unwrap(), Ok(Ok(())));
    gate.open();
    for task in held {
        task.await.unwrap().unwrap().unwrap();
    }
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn bulkhead_wait_zero_rejects_at_once() {
    let (guard, _) = guard_with("max_connections = 1\nbulkhead_wait = 0");
    assert_eq!(guard.bulkhead_permits(), 1);
    let gate = Gate::new();
    let held = held_call(&guard, &gate);
    settle().await;
    let start = Instant::now();
    let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert!(matches!(
        err.cause(),
        Cause::BulkheadFull { permits: 1, .. }
    ));
    gate.open();
    held.await.unwrap().unwrap().unwrap();
    assert_eq!(counts(&guard), (State::Closed, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn cancelled_while_waiting_for_a_bulkhead_permit() {
    let (guard, calls) = guard_with("max_connections = 5");
    let gate = Gate::new();
    let held: Vec<_> = (0..4).map(|_| held_call(&guard, &gate)).collect();
    settle().await;
    // One waiter aborted, one dropped by the caller's own timeout.
    let waiter = held_call(&guard, &gate);
    settle().await;
    waiter.abort();
    assert!(waiter.await.unwrap_err().is_cancelled());
    let dropped = timeout(500 * MS, guard.call(gate.wait())).await;
    assert!(dropped.is_err());
    assert_eq!(guard.in_flight(), 4);
    assert_eq!(counts(&guard), (State::Closed, 0, 0));
    gate.open();
    for task in held {
        task.await.unwrap().unwrap().unwrap();
    }
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(counts(&guard), (State::Closed, 0, 4));
    // Nothing was reported for the calls that never got a permit.
    assert_eq!(calls.names(), ["success"; 4]);
}

#[tokio::test(start_paused = true)]
async fn cancelled_mid_call_records_nothing() {
    let (guard, calls) = guard_with("");
    // Fail nine times: one more failure would open it.
    fail_n(&guard, 9).await;
    // The callers give up before the slow threshold (15 s): nothing is known yet.
    for _ in 0..20 {
        let r = timeout(10 * S, guard.call(sleep(30 * S).then_ok())).await;
        assert!(r.is_err(), "the caller gave up first");
        assert_eq!(guard.in_flight(), 0);
    }
    let gate = Gate::new();
    let task = held_call(&guard, &gate);
    settle().await;
    assert_eq!(guard.in_flight(), 1);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(counts(&guard), (State::Closed, 9, 9));
    let names = calls.names();
    assert_eq!(names.iter().filter(|n| **n == "cancelled").count(), 21);
    assert_eq!(names.len(), 30);
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_after_its_slow_threshold_has_counted_once() {
    let (guard, calls) = guard_with("");
    fail_n(&guard, 8).await;
    // Still running at 15 s (read_timeout / 2): counted as slow then, while the call
    // goes on; the caller gives up at 20 s, which records nothing more.
    let r = timeout(20 * S, guard.call(sleep(30 * S).then_ok())).await;
    assert!(r.is_err(), "the caller gave up first");
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(counts(&guard), (State::Closed, 9, 9));
    assert_eq!(calls.names().last(), Some(&"cancelled"));
    // One more call past its threshold is the tenth failure: it opens at 15 s into
    // that call, before its caller or the total timeout gives up.
    let started = tokio::time::Instant::now();
    let hung = tokio::spawn({
        let guard = guard.clone();
        async move { guard.call(std::future::pending::<Result<(), ()>>()).await }
    });
    settle().await; // the call starts at `started`; now is `started` + 1 ms
    advance(15 * S - MS).await;
    settle().await;
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.breaker().snapshot().since, started + 15 * S);
    let err = hung.await.unwrap().unwrap_err();
    assert!(matches!(err.cause(), Cause::Timeout { .. }));
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn dropping_a_call_at_any_point_gives_everything_back() {
    let (guard, calls) = guard_with("max_connections = 2");
    assert_eq!(guard.bulkhead_permits(), 1);
    fail_n(&guard, 10).await;
    advance(30 * S).await;
    let no_trials = Trials {
        admitted: 0,
        succeeded: 0,
    };

    // A call dropped before it was polled: it took nothing.
    drop(guard.call(async { Ok::<_, ()>(()) }));
    assert_eq!(guard.in_flight(), 0);
    let snap = guard.breaker().snapshot();
    assert_eq!((snap.state, snap.trials), (State::HalfOpen, no_trials));

    // A trial admitted and dropped while its call ran: the trial slot and the bulkhead
    // permit are back, nothing counted, the call reported cancelled.
    let held = common::hold(&guard).await.unwrap();
    assert_eq!(guard.in_flight(), 1);
    assert_eq!(
        guard.breaker().snapshot().trials,
        Trials {
            admitted: 1,
            succeeded: 0
        }
    );
    drop(held);
    let snap = guard.breaker().snapshot();
    assert_eq!((snap.state, snap.trials), (State::HalfOpen, no_trials));
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(calls.names().last(), Some(&"cancelled"));

    // (A call that ended is judged in the same poll: there is no moment at which it
    // ended but was not yet recorded.)

    // The trial slots are all still there.
    for _ in 0..3 {
        assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
    }
    assert_eq!(counts(&guard), (State::Closed, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_trial_slot_is_reusable() {
    let (guard, _) = guard_with("max_connections = 20");
    fail_n(&guard, 10).await;
    advance(30 * S).await;
    let gate = Gate::new();
    let trials: Vec<_> = (0..3).map(|_| held_call(&guard, &gate)).collect();
    settle().await;
    assert_eq!(
        guard.breaker().snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 0
        }
    );
    let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(*err.cause(), Cause::HalfOpenFull { trials: 3 });

    // Abort one trial mid-call: its slot comes back, and a new caller takes it.
    trials[0].abort();
    settle().await;
    assert_eq!(
        guard.breaker().snapshot().trials,
        Trials {
            admitted: 2,
            succeeded: 0
        }
    );
    assert_eq!(guard.in_flight(), 2);
    assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
    assert_eq!(
        guard.breaker().snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 1
        }
    );

    // Abort the other two: not stuck half-open with no trial ever finishing.
    for t in &trials[1..] {
        t.abort();
    }
    for t in trials {
        assert!(t.await.unwrap_err().is_cancelled());
    }
    assert_eq!(guard.in_flight(), 0);
    let snap = guard.breaker().snapshot();
    assert_eq!(
        (snap.state, snap.trials),
        (
            State::HalfOpen,
            Trials {
                admitted: 1,
                succeeded: 1
            }
        )
    );
    for _ in 0..2 {
        assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
    }
    assert_eq!(counts(&guard), (State::Closed, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn every_trial_cancelled_by_its_caller_then_the_breaker_recovers() {
    let (guard, _) = guard_with("");
    fail_n(&guard, 10).await;
    advance(30 * S).await;
    for _ in 0..10 {
        // Three callers that give up after 1 s, concurrently.
        let gate = Gate::new();
        let callers: Vec<_> = (0..3)
            .map(|_| {
                let guard = guard.clone();
                let wait = gate.wait();
                tokio::spawn(async move { timeout(S, guard.call(wait)).await })
            })
            .collect();
        settle().await;
        assert_eq!(
            guard.breaker().snapshot().trials,
            Trials {
                admitted: 3,
                succeeded: 0
            }
        );
        for c in callers {
            assert!(c.await.unwrap().is_err());
        }
        let snap = guard.breaker().snapshot();
        assert_eq!(
            (snap.state, snap.trials),
            (
                State::HalfOpen,
                Trials {
                    admitted: 0,
                    succeeded: 0
                }
            )
        );
        assert_eq!(guard.in_flight(), 0);
    }
    for _ in 0..3 {
        guard
            .call(async { Ok::<_, ()>(()) })
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(guard.breaker().state(), State::Closed);
}

/// Not on a runtime: the panic reaches the caller's own `catch_unwind` around `block_on`.
#[test]
fn a_panic_reaches_the_callers_catch_unwind() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let guard = rt.block_on(async { guard_with("").0 });
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(guard.call(async { panic!("inner") as Result<(), ()> }))
    }));
    let payload = result.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"inner"));
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(counts(&guard), (State::Closed, 1, 1));
    // The guard still works after the unwind.
    assert_eq!(rt.block_on(guard.call(async { Ok::<_, ()>(3) })), Ok(Ok(3)));
}

fn panic_message(err: tokio::task::JoinError) -> String {
    assert!(err.is_panic());
    let payload = err.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(std::string::ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_keeps_unwinding() {
    let (guard, calls) = guard_with("");
    // On the first poll.
    let g = guard.clone();
    let task =
        tokio::spawn(async move { g.call(async { panic!("boom") as Result<(), ()> }).await });
    assert_eq!(panic_message(task.await.unwrap_err()), "boom");
    assert_eq!(counts(&guard), (State::Closed, 1, 1));
    assert_eq!(guard.in_flight(), 0);
    // On a later poll, after the timer was set up.
    let g = guard.clone();
    let task = tokio::spawn(async move {
        g.call(async {
            sleep(S).await;
            panic!("later {}", 2);
            #[allow(unreachable_code)]
            Ok::<(), ()>(())
        })
        .await
    });
    assert_eq!(panic_message(task.await.unwrap_err()), "later 2");
    assert_eq!(counts(&guard), (State::Closed, 2, 2));
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(calls.names(), ["failure", "failure"]);

    // Eight more panics: ten failures open it.
    for _ in 0..8 {
        let g = guard.clone();
        let task =
            tokio::spawn(async move { g.call(async { panic!("boom") as Result<(), ()> }).await });
        assert!(task.await.unwrap_err().is_panic());
    }
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_trial_reopens_instead_of_sticking_half_open() {
    let (guard, _) = guard_with("");
    fail_n(&guard, 10).await;
    advance(30 * S).await;
    let gate = Gate::new();
    let others: Vec<_> = (0..2).map(|_| held_call(&guard, &gate)).collect();
    settle().await;
    let g = guard.clone();
    let task =
        tokio::spawn(async move { g.call(async { panic!("trial") as Result<(), ()> }).await });
    assert!(task.await.unwrap_err().is_panic());
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.breaker().snapshot().retry_after, Some(30 * S));
    // The other two trials finish late: they belong to the half-open that ended.
    gate.open();
    for t in others {
        t.await.unwrap().unwrap().unwrap();
    }
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.in_flight(), 0);
    advance(30 * S).await;
    for _ in 0..3 {
        guard
            .call(async { Ok::<_, ()>(()) })
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(guard.breaker().state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_trial_reopens_and_returns_its_permits() {
    let (guard, _) = guard_with("");
    fail_n(&guard, 10).await;
    advance(30 * S).await;
    let err = guard
        .call(std::future::pending::<Result<(), ()>>())
        .await
        .unwrap_err();
    assert!(matches!(err.cause(), Cause::Timeout { .. }));
    assert_eq!(guard.breaker().state(), State::Open);
    // It reopened when the trial passed its slow threshold (15 s), not at the 35 s
    // timeout: 30 s open from then leaves 10 s.
    assert_eq!(guard.breaker().snapshot().retry_after, Some(10 * S));
    assert_eq!(guard.in_flight(), 0);
}

/// `Ok(())` once a future finishes, for calls that only wait.
trait ThenOk: Future<Output = ()> + Sized {
    fn then_ok(self) -> impl Future<Output = Result<(), ()>> {
        async move {
            self.await;
            Ok(())
        }
    }
}

impl<F: Future<Output = ()>> ThenOk for F {}

/// Panics whenever the breaker goes half-open.
struct PanicsOnHalfOpen;

impl Observer for PanicsOnHalfOpen {
    fn on_transition(&self, transition: &outbound_guard::Transition<'_>) {
        assert!(
            transition.to != State::HalfOpen,
            "observer panics on {:?}",
            transition.to
        );
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

#[tokio::test(start_paused = true)]
async fn an_observer_panicking_on_half_open_does_not_wedge_the_breaker() {
    let (calls, panicky) = (Arc::new(Calls::default()), Arc::new(PanicsOnHalfOpen));
    let guard = Guard::builder(&system(
        "cb_window_size = 1\ncb_min_calls = 1\ncb_open_duration = 2\ncb_half_open_calls = 2",
    ))
    .observer(panicky)
    .observer(calls.clone())
    .build();
    fail_n(&guard, 1).await;
    assert_eq!(guard.breaker().state(), State::Open);
    advance(3 * S).await;
    // The first trial's admission reports open → half-open, and the observer panics.
    // However that ends for this caller, the breaker goes on: successful trials close it.
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        if guard.breaker().state() == State::Closed {
            break;
        }
        let g = guard.clone();
        let answer = tokio::spawn(async move { g.call(async { Ok::<_, ()>(()) }).await }).await;
        outcomes.push(match answer {
            Ok(Ok(_)) => "ok".to_owned(),
            Ok(Err(e)) => e.cause().as_str().to_owned(),
            Err(e) => format!("panic: {}", panic_message(e)),
        });
        assert_eq!(guard.in_flight(), 0);
    }
    assert_eq!(guard.breaker().state(), State::Closed, "{outcomes:?}");
    assert!(
        !outcomes.iter().any(|o| o == "half_open_full"),
        "{outcomes:?}"
    );
    // And an hour later it still works.
    advance(3600 * S).await;
    assert_eq!(guard.call(async { Ok::<_, ()>(1) }).await, Ok(Ok(1)));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_classifier_is_a_failure_and_keeps_unwinding() {
    let (guard, calls) = guard_with("cb_window_size = 1\ncb_min_calls = 1");
    let g = guard.clone();
    let task = tokio::spawn(async move {
        let options = CallOptions::new()
            .failure_if(|code: &u32| -> bool { panic!("classifier panics on {code}") });
        let _ = g.call_judged(options, async { Err::<(), u32>(7) }).await;
    });
    assert_eq!(
        panic_message(task.await.unwrap_err()),
        "classifier panics on 7"
    );
    assert_eq!(calls.names(), ["failure"]);
    assert_eq!(guard.breaker().state(), State::Open, "the failure counted");
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_polled_again_panics_rather_than_run_on_and_count_twice() {
    let (guard, calls) = guard_with("");
    let mut call = Box::pin(guard.call(async {
        sleep(60 * S).await;
        Ok::<(), ()>(())
    }));
    let err = std::future::poll_fn(|cx| call.as_mut().poll(cx))
        .await
        .unwrap_err();
    assert!(matches!(err.cause(), Cause::Timeout { .. }));
    assert_eq!(calls.names(), ["timeout"]);
    assert_eq!(guard.in_flight(), 1, "held until the future is dropped");
    advance(60 * S).await; // the call itself would be ready now
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        call.as_mut()
            .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    }));
    assert!(again.is_err(), "a completed call is not run on");
    assert_eq!(calls.names(), ["timeout"], "nor counted twice");
    assert_eq!(counts(&guard), (State::Closed, 1, 1));
    drop(call);
    assert_eq!(guard.in_flight(), 0);
}
