//! The bulkhead's guarantees through a guard's calls, each body run twice
//! (`at_both!`): on a fixed bulkhead of four permits, and on an adaptive one whose
//! limit is held low at its floor of four, a quarter of its ceiling of sixteen. First
//! come first served, the bounded wait (`bulkhead_wait`), none admitted while the calls
//! in flight are at the limit, cancel-safety, panic-safety, and a lowered limit taking
//! effect as permits come back, no call cancelled. Paused time; fewer successes than a
//! window's worth, so the adaptive limit is never resampled.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{sleep, Instant};

use super::limiter::MIN_SAMPLES;
use crate::{Cause, Guard, Settings};

/// The limit both bulkheads start at.
const LIMIT: usize = 4;

/// Where the guard's bulkhead stands: at its ceiling, or adaptive and held low.
#[derive(Debug, Clone, Copy)]
enum At {
    /// A fixed bulkhead of [`LIMIT`] permits.
    Ceiling,
    /// An adaptive bulkhead of 16 permits whose limit is its floor, [`LIMIT`].
    Low,
}

/// The system's keys at `at` for a limit of `limit`, and timeouts long enough that no
/// held call times out: a ceiling of `limit`, and for an adaptive bulkhead a floor of
/// `limit` too (where it starts). A reload to [`wide`] keeps the limit held low.
fn toml(at: At, limit: usize) -> String {
    let max_connections = (limit * 5).div_ceil(4);
    let keys = match at {
        At::Ceiling => format!("max_connections = {max_connections}"),
        At::Low => format!(
            "max_connections = {max_connections}\nbulkhead = \"adaptive\"\nbulkhead_floor = {limit}"
        ),
    };
    format!("[systems.sber]\n{keys}\nread_timeout = 100\ntotal_timeout = 120\n")
}

/// The adaptive bulkhead's keys with a ceiling of 16 and a floor of [`LIMIT`].
fn wide() -> String {
    format!(
        "[systems.sber]\nmax_connections = 20\nbulkhead = \"adaptive\"\nbulkhead_floor = {LIMIT}\n\
         read_timeout = 100\ntotal_timeout = 120\n"
    )
}

fn guard(at: At) -> Guard {
    let settings = Settings::parse(&toml(at, LIMIT), "test").expect("valid");
    let guard = Guard::new(settings.system("sber").expect("declared"));
    if let At::Low = at {
        assert_eq!(
            guard.bulkhead_limit(),
            LIMIT,
            "started at its floor, its ceiling"
        );
        let wider = Settings::parse(&wide(), "test").expect("valid");
        guard.apply(wider.system("sber").expect("declared"));
    }
    assert_eq!(guard.bulkhead_limit(), LIMIT);
    let ceiling = match at {
        At::Ceiling => LIMIT,
        At::Low => 16,
    };
    assert_eq!(guard.bulkhead_permits(), ceiling);
    guard
}

/// The limit is still [`LIMIT`] (nothing resampled it) and nothing is in flight.
fn done(guard: &Guard, at: At) {
    assert_eq!(guard.in_flight(), 0, "{at:?}: every permit back");
    assert!(matches!(at, At::Ceiling) || guard.bulkhead_limit() == LIMIT);
}

/// A gate a held call waits on.
struct Gate(watch::Sender<bool>);

impl Gate {
    fn new() -> Self {
        Gate(watch::channel(false).0)
    }

    fn open(&self) {
        self.0.send_replace(true);
    }
}

type Answer = Result<Result<(), ()>, crate::CircuitBreakerError>;

/// A guarded call on its own task: once admitted it writes `name` in `order`, then
/// waits for `gate`.
fn held(guard: &Guard, gate: &Gate, order: &Arc<Mutex<Vec<u32>>>, name: u32) -> JoinHandle<Answer> {
    let (guard, order) = (guard.clone(), Arc::clone(order));
    let mut open = gate.0.subscribe();
    tokio::spawn(async move {
        guard
            .call(async move {
                order.lock().unwrap().push(name);
                open.wait_for(|open| *open).await.map_err(drop)?;
                Ok(())
            })
            .await
    })
}

/// `n` held calls, named 0 to n - 1, admitted; each with its own gate.
async fn hold(
    guard: &Guard,
    order: &Arc<Mutex<Vec<u32>>>,
    n: u32,
) -> Vec<(Gate, JoinHandle<Answer>)> {
    let calls = (0..n)
        .map(|name| {
            let gate = Gate::new();
            let task = held(guard, &gate, order, name);
            (gate, task)
        })
        .collect();
    settle().await;
    calls
}

/// Lets every spawned task run to its await point (paused time runs them first).
async fn settle() {
    sleep(Duration::from_millis(1)).await;
}

/// Opens the gate of a held call and checks it ended as a success.
async fn end(call: (Gate, JoinHandle<Answer>)) {
    call.0.open();
    assert_eq!(call.1.await.unwrap(), Ok(Ok(())));
}

async fn none_admitted_at_the_limit_and_a_caller_waits_bulkhead_wait_then_is_refused(at: At) {
    let guard = guard(at);
    let order = Arc::default();
    let calls = hold(&guard, &order, LIMIT as u32).await;
    assert_eq!(guard.in_flight(), LIMIT);
    let wait = guard.settings().bulkhead_wait();
    assert_eq!(wait, Duration::from_secs(2));
    for _ in 0..3 {
        let start = Instant::now();
        let refused = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
        assert_eq!(start.elapsed(), wait, "{at:?}: waits exactly bulkhead_wait");
        assert!(
            matches!(refused.cause(), Cause::BulkheadFull { waited, .. } if *waited == wait),
            "{at:?}: {refused}"
        );
        assert_eq!(
            guard.in_flight(),
            LIMIT,
            "{at:?}: none admitted past the limit"
        );
    }
    for call in calls {
        end(call).await;
    }
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
    done(&guard, at);
}

async fn waiters_are_admitted_first_come_first_served(at: At) {
    let guard = guard(at);
    let order = Arc::default();
    let mut calls = hold(&guard, &order, LIMIT as u32).await;
    let mut waiters = Vec::new();
    for name in 10..13 {
        let gate = Gate::new();
        let task = held(&guard, &gate, &order, name);
        waiters.push((gate, task));
        settle().await; // each arrives after the one before
    }
    assert_eq!(order.lock().unwrap().len(), LIMIT, "{at:?}: the three wait");
    for (ended, call) in calls.drain(..3).enumerate() {
        end(call).await;
        settle().await;
        let admitted = order.lock().unwrap()[LIMIT..].to_vec();
        assert_eq!(admitted, [10, 11, 12][..=ended], "{at:?}: in arrival order");
        assert_eq!(guard.in_flight(), LIMIT);
    }
    for call in calls.into_iter().chain(waiters) {
        end(call).await;
    }
    done(&guard, at);
}

async fn a_cancelled_waiter_holds_nothing_and_the_permit_it_would_have_had_is_free(at: At) {
    let guard = guard(at);
    let order = Arc::default();
    let mut calls = hold(&guard, &order, LIMIT as u32).await;
    let gate = Gate::new();
    let waiter = held(&guard, &gate, &order, 10);
    settle().await;
    waiter.abort();
    assert!(waiter.await.unwrap_err().is_cancelled());
    end(calls.pop().unwrap()).await;
    assert_eq!(
        guard.in_flight(),
        LIMIT - 1,
        "{at:?}: not handed to the cancelled one"
    );
    let start = Instant::now();
    let answer = guard.call(async { Ok::<_, ()>(()) }).await;
    assert_eq!(answer, Ok(Ok(())));
    assert_eq!(start.elapsed(), Duration::ZERO, "{at:?}: admitted at once");
    for call in calls {
        end(call).await;
    }
    done(&guard, at);
}

async fn a_call_that_panics_gives_its_permit_back(at: At) {
    let guard = guard(at);
    let order = Arc::default();
    let calls = hold(&guard, &order, LIMIT as u32 - 1).await;
    let panicking = guard.clone();
    let panicked = tokio::spawn(async move { panicking.call(async { boom() }).await });
    assert!(panicked.await.unwrap_err().is_panic());
    assert_eq!(guard.in_flight(), LIMIT - 1, "{at:?}: its permit came back");
    let last = hold_one(&guard, &order).await;
    assert_eq!(
        guard.in_flight(),
        LIMIT,
        "{at:?}: the last permit taken again"
    );
    let refused = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert!(
        matches!(refused.cause(), Cause::BulkheadFull { .. }),
        "{at:?}"
    );
    for call in calls.into_iter().chain([last]) {
        end(call).await;
    }
    done(&guard, at);
}

/// A call's body that panics.
fn boom() -> Result<(), ()> {
    panic!("the call panics holding the last permit")
}

/// One more held call, named 99.
async fn hold_one(guard: &Guard, order: &Arc<Mutex<Vec<u32>>>) -> (Gate, JoinHandle<Answer>) {
    let gate = Gate::new();
    let task = held(guard, &gate, order, 99);
    settle().await;
    (gate, task)
}

async fn a_lowered_limit_takes_effect_as_permits_come_back_and_cancels_no_call(at: At) {
    let guard = guard(at);
    let order = Arc::default();
    let mut calls = hold(&guard, &order, LIMIT as u32).await;
    let lowered = Settings::parse(&toml(at, 2), "test").expect("valid");
    guard.apply(lowered.system("sber").expect("declared"));
    assert_eq!(guard.bulkhead_limit(), 2, "{at:?}");
    assert_eq!(guard.in_flight(), LIMIT, "{at:?}: no call cancelled");
    for still in [3, 2] {
        end(calls.pop().unwrap()).await;
        assert_eq!(guard.in_flight(), still);
        let refused = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
        assert!(
            matches!(refused.cause(), Cause::BulkheadFull { .. }),
            "{at:?}: {still} in flight of 2"
        );
    }
    end(calls.pop().unwrap()).await;
    let answer = guard.call(async { Ok::<_, ()>(()) }).await;
    assert_eq!(answer, Ok(Ok(())), "{at:?}: one in flight of 2");
    end(calls.pop().unwrap()).await;
    assert_eq!(guard.in_flight(), 0);
    assert!(
        order.lock().unwrap().len() + 1 < MIN_SAMPLES as usize,
        "fewer successes than a window: the limit was never resampled"
    );
    assert_eq!(guard.bulkhead_limit(), 2);
}

/// Two tests of one async body taking an [`At`]: `NAME::at_the_ceiling`,
/// `NAME::held_low`.
macro_rules! at_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(start_paused = true)]
            async fn at_the_ceiling() {
                super::$name(super::At::Ceiling).await;
            }

            #[tokio::test(start_paused = true)]
            async fn held_low() {
                super::$name(super::At::Low).await;
            }
        }
    )*};
}

at_both!(
    none_admitted_at_the_limit_and_a_caller_waits_bulkhead_wait_then_is_refused,
    waiters_are_admitted_first_come_first_served,
    a_cancelled_waiter_holds_nothing_and_the_permit_it_would_have_had_is_free,
    a_call_that_panics_gives_its_permit_back,
    a_lowered_limit_takes_effect_as_permits_come_back_and_cancels_no_call,
);
