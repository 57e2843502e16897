//! A call still running at its slow threshold is counted as slow then, once; what the
//! observers are told at its end agrees with what the breaker counted, even when the
//! call ends on the threshold itself. Paused time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{CallEvent, Guard, Observer, Outcome, Settings, State};
use tokio::sync::oneshot;
use tokio::time::{sleep, Instant};

mod common;
use common::{system, S};

#[derive(Default)]
struct Outcomes(Mutex<Vec<Outcome>>);

impl Observer for Outcomes {
    fn on_call(&self, call: &CallEvent<'_>) {
        self.0.lock().unwrap().push(call.outcome);
    }
}

/// Window of 1: the breaker opens on the first failure it counts.
fn guard() -> (Guard, Arc<Outcomes>) {
    let settings = system(
        "cb_window_size = 1\ncb_min_calls = 1\nread_timeout = 10\ntotal_timeout = 20\ncb_slow_threshold = 5",
    );
    let outcomes = Arc::new(Outcomes::default());
    let guard = Guard::builder(&settings).observer(outcomes.clone()).build();
    (guard, outcomes)
}

#[tokio::test(start_paused = true)]
async fn a_call_ending_exactly_on_the_threshold_is_reported_as_the_breaker_counted_it() {
    // Both orders of the two wake-ups at t = 5 s: the answer's sender spawned before
    // the call (it may answer first: not slow, nothing counted early) and after it (the
    // slow timer may fire first: counted slow, and then reported slow).
    for sender_first in [true, false] {
        let (guard, outcomes) = guard();
        let (tx, rx) = oneshot::channel::<()>();
        let answer = async move {
            sleep(5 * S).await;
            let _ = tx.send(());
        };
        let call = {
            let guard = guard.clone();
            async move { guard.call(async move { rx.await.map_err(|_| ()) }).await }
        };
        // Tasks first run in the order they are spawned, and so set their timers.
        let (sender, call) = if sender_first {
            let sender = tokio::spawn(answer);
            (sender, tokio::spawn(call))
        } else {
            let call = tokio::spawn(call);
            (tokio::spawn(answer), call)
        };
        let call = call.await.unwrap();
        let result = call.expect("admitted");
        sender.await.unwrap();
        assert_eq!(result, Ok(()));
        let reported = outcomes.0.lock().unwrap().clone();
        let counted_slow = guard.breaker().state() == State::Open;
        assert_eq!(
            reported,
            [if counted_slow {
                Outcome::Slow
            } else {
                Outcome::Success
            }],
            "sender first: {sender_first}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_hung_call_is_counted_at_the_threshold_and_reported_once_at_the_timeout() {
    let (guard, outcomes) = guard();
    let started = Instant::now();
    let call = tokio::spawn({
        let guard = guard.clone();
        async move { guard.call(std::future::pending::<Result<(), ()>>()).await }
    });
    sleep(5 * S + Duration::from_millis(1)).await;
    // Counted at 5 s, while still running: the breaker is open already.
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.breaker().snapshot().since, started + 5 * S);
    assert!(outcomes.0.lock().unwrap().is_empty(), "not ended yet");
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.cause().as_str(), "timeout");
    assert_eq!(Instant::now(), started + 20 * S);
    assert_eq!(*outcomes.0.lock().unwrap(), [Outcome::Timeout]);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_late_slow_timer_opens_the_breaker_for_its_full_duration_from_then() {
    let settings = Settings::parse(
        "[systems.sber]\ncb_window_size = 1\ncb_min_calls = 1\nread_timeout = 10\ntotal_timeout = 20\ncb_slow_threshold = 5\ncb_open_duration = 2",
        "inline",
    )
    .unwrap();
    let guard = Guard::new(settings.system("sber").unwrap());
    let started = Instant::now();
    let call = tokio::spawn({
        let guard = guard.clone();
        async move { guard.call(std::future::pending::<Result<(), ()>>()).await }
    });
    tokio::task::yield_now().await; // the call starts and sets its timer for 5 s
                                    // The runtime is busy until 9 s: the slow timer fires 4 s late, in one jump.
    tokio::time::advance(9 * S).await;
    tokio::task::yield_now().await;
    assert_eq!(guard.breaker().state(), State::Open);
    let snapshot = guard.breaker().snapshot();
    assert_eq!(
        snapshot.since,
        started + 9 * S,
        "opened when the timer fired"
    );
    assert_eq!(
        snapshot.retry_after,
        Some(2 * S),
        "for the full open duration"
    );
    let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(err.cause().as_str(), "open", "no trial before 11 s");
    call.abort();
}
