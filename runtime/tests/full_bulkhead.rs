//! What a caller who finds the bulkhead full is told, on paused time: an open breaker
//! refuses it at once with the time left until the trials (shrinking with time, none
//! at the instant they are due), a forced-open breaker refuses it at once as forced
//! open; neither makes it wait `bulkhead_wait` first. And the states print as their
//! names.

use std::time::Duration;

use outbound_guard::{Cause, Guard, Settings, State};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{sleep, Instant};

const S: Duration = Duration::from_secs(1);

/// One permit; a call counts as slow after 1 s and may run 100 s; one slow call of one
/// opens the breaker for 30 s; a 2 s bulkhead wait.
fn guard() -> Guard {
    let settings = Settings::parse(
        "[systems.sber]\nmax_connections = 1\ncb_min_calls = 1\ncb_window_size = 1\n\
         cb_failure_rate = 1\ncb_open_duration = 30\nbulkhead_wait = 2\n\
         cb_slow_threshold = 1\ntotal_timeout = 100\n",
        "inline",
    )
    .unwrap();
    Guard::new(settings.system("sber").unwrap())
}

/// A call that holds the only permit until `release` is sent (or dropped).
fn hold(guard: &Guard) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (release, held) = oneshot::channel::<()>();
    let guard = guard.clone();
    let call = tokio::spawn(async move {
        let _ = guard
            .call(async move {
                let _ = held.await;
                Ok::<_, ()>(())
            })
            .await;
    });
    (release, call)
}

/// Calls once with a fast call; the guard's refusal and how long it took.
async fn refused(guard: &Guard) -> (Cause, Duration) {
    let start = Instant::now();
    let answer = guard.call(async { Ok::<_, ()>(()) }).await;
    (*answer.unwrap_err().cause(), start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn a_forced_open_breaker_turns_away_a_caller_at_once_even_with_the_bulkhead_full() {
    let guard = guard();
    let (release, call) = hold(&guard);
    sleep(Duration::from_millis(1)).await;
    assert_eq!(guard.in_flight(), 1, "the only permit is held");
    guard.breaker().act(outbound_guard::ManualAction::ForceOpen);
    let (cause, took) = refused(&guard).await;
    assert_eq!(cause, Cause::ForcedOpen);
    assert_eq!(took, Duration::ZERO, "no bulkhead wait first");
    release.send(()).unwrap();
    call.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_with_the_bulkhead_full_says_how_long_is_left_until_the_trials() {
    let guard = guard();
    // The only permit's call turns slow at 1 s, still running: the breaker opens then,
    // for 30 s, with the bulkhead still full.
    let (release, call) = hold(&guard);
    sleep(S + Duration::from_millis(1)).await;
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.in_flight(), 1);
    let due = Instant::now() - Duration::from_millis(1) + 30 * S;

    sleep(10 * S).await;
    let (cause, took) = refused(&guard).await;
    assert_eq!(
        (cause, took),
        (
            Cause::Open {
                retry_after: due - Instant::now()
            },
            Duration::ZERO
        )
    );
    assert_eq!(due - Instant::now(), 20 * S - Duration::from_millis(1));

    sleep(10 * S).await;
    let (cause, _) = refused(&guard).await;
    assert_eq!(
        cause,
        Cause::Open {
            retry_after: 10 * S - Duration::from_millis(1)
        },
        "it shrinks"
    );

    // A millisecond before the trials are due: refused at once, 1 ms left.
    tokio::time::sleep_until(due - Duration::from_millis(1)).await;
    let (cause, took) = refused(&guard).await;
    assert_eq!(
        (cause, took),
        (
            Cause::Open {
                retry_after: Duration::from_millis(1)
            },
            Duration::ZERO
        )
    );

    // At the instant they are due: not refused by the breaker; the caller queues for the
    // permit, which the slow call still holds, and is turned away by the bulkhead.
    tokio::time::sleep_until(due).await;
    let (cause, took) = refused(&guard).await;
    assert!(matches!(cause, Cause::BulkheadFull { .. }), "{cause:?}");
    assert_eq!(took, 2 * S);

    release.send(()).unwrap();
    call.await.unwrap();
}

#[test]
fn states_print_as_their_names() {
    let shown: Vec<String> = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::Disabled,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        shown,
        ["closed", "open", "half_open", "forced_open", "disabled"]
    );
}
