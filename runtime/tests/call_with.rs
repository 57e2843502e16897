//! `Guard::call_judged` with `CallOptions`: the attribute's options for code without the
//! attribute, judged as the attribute judges, on paused time; and `Guard::call_with`,
//! deprecated, the same call.

use std::time::Duration;

use outbound_guard::{CallOptions, Cause, Guard, Verdict};

#[derive(Debug, PartialEq)]
enum PortError {
    Declined,
    Outage,
}

mod common;

fn guard() -> Guard {
    common::guard("cb_slow_threshold = 1\ncb_min_calls = 5\ncb_window_size = 5")
}

async fn slow_ok() -> Result<u32, PortError> {
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(7)
}

#[tokio::test(start_paused = true)]
async fn slow_as_error_returns_the_slow_cause_instead_of_the_value() {
    let guard = guard();
    let err = guard
        .call_judged(CallOptions::new().slow_as_error(), slow_ok())
        .await
        .unwrap_err();
    assert!(matches!(err.cause(), Cause::Slow { .. }), "{err}");
    // Without it the value comes back, and the slowness still counts.
    assert_eq!(
        guard.call_judged(CallOptions::new(), slow_ok()).await,
        Ok(Ok(7))
    );
    assert_eq!(guard.breaker().snapshot().failures, 2);
}

#[tokio::test(start_paused = true)]
async fn failure_if_decides_which_errors_count() {
    let guard = guard();
    let options = CallOptions::new().failure_if(|e: &PortError| *e == PortError::Outage);
    let declined = guard
        .call_judged(options, async { Err::<(), _>(PortError::Declined) })
        .await;
    assert_eq!(declined, Ok(Err(PortError::Declined)));
    assert_eq!(guard.breaker().snapshot().failures, 0);
    let outage = guard
        .call_judged(options, async { Err::<(), _>(PortError::Outage) })
        .await;
    assert_eq!(outage, Ok(Err(PortError::Outage)));
    assert_eq!(guard.breaker().snapshot().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_slow_declined_call_is_not_turned_into_the_slow_cause() {
    let guard = guard();
    let options = CallOptions::new()
        .failure_if(|e: &PortError| *e == PortError::Outage)
        .slow_as_error();
    let answer = guard
        .call_judged(options, async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Err::<(), _>(PortError::Declined)
        })
        .await;
    assert_eq!(answer, Ok(Err(PortError::Declined)));
}

#[tokio::test(start_paused = true)]
async fn the_future_does_nothing_until_polled() {
    let guard = common::guard("max_connections = 2");
    let built = guard.call(async { Ok::<_, ()>(()) });
    assert_eq!(guard.in_flight(), 0, "no permit taken by building it");
    drop(built);
    assert_eq!(guard.breaker().snapshot().calls, 0, "nothing recorded");
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn every_step_is_one_future_whose_permits_go_back_when_it_ends() {
    // One permit: while the first call runs, a second one queues in the bulkhead
    // (inside its future) and gets the permit the moment the first ends.
    let guard = common::guard("max_connections = 1\nbulkhead_wait = 10");
    let first = tokio::spawn({
        let guard = guard.clone();
        async move {
            guard
                .call(async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Ok::<_, ()>(1)
                })
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(1)).await;
    let start = tokio::time::Instant::now();
    let second = guard.call(async { Ok::<_, ()>(2) }).await;
    assert_eq!(second, Ok(Ok(2)));
    assert_eq!(start.elapsed(), Duration::from_millis(299));
    assert_eq!(first.await.unwrap(), Ok(Ok(1)));
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(guard.breaker().snapshot().calls, 2);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "`GuardedCall` polled after it completed")]
async fn polling_it_again_after_it_completed_panics() {
    let guard = common::guard("");
    let mut call = std::pin::pin!(guard.call(async { Ok::<_, ()>(()) }));
    assert_eq!((&mut call).await, Ok(Ok(())));
    let _ = std::future::poll_fn(|cx| std::future::Future::poll(call.as_mut(), cx)).await;
}

/// A copy of the options judges as the original does (`failure_if`, `slow_as_error`).
#[tokio::test(start_paused = true)]
#[allow(clippy::clone_on_copy)] // `Clone` itself is under test
async fn copied_options_judge_as_the_original() {
    #[derive(Debug, PartialEq)]
    enum PortError {
        Declined,
    }
    let settings = outbound_guard::Settings::parse("[systems.sber]", "inline").unwrap();
    let guard = outbound_guard::Guard::new(settings.system("sber").unwrap());
    let options = outbound_guard::CallOptions::new()
        .failure_if(|_: &PortError| false)
        .slow_as_error();
    let copy = options.clone();
    let declined = guard
        .call_judged(copy, async { Err::<(), _>(PortError::Declined) })
        .await;
    assert_eq!(declined.unwrap(), Err(PortError::Declined));
    assert_eq!(
        guard.breaker().snapshot().failures,
        0,
        "the copy kept failure_if"
    );
    let slow = guard
        .call_judged(options.clone(), async {
            tokio::time::sleep(std::time::Duration::from_secs(16)).await;
            Ok::<_, PortError>(())
        })
        .await;
    assert!(
        matches!(
            slow.unwrap_err().cause(),
            outbound_guard::Cause::Slow { .. }
        ),
        "the copy kept slow_as_error"
    );
}

/// A guarded call prints as what it is, without its call.
#[tokio::test]
async fn a_guarded_call_prints_its_steps() {
    let settings = outbound_guard::Settings::parse("[systems.sber]", "inline").unwrap();
    let guard = outbound_guard::Guard::new(settings.system("sber").unwrap());
    let call = guard.call(async { Ok::<_, ()>(()) });
    let shown = format!("{call:?}");
    assert!(shown.starts_with("GuardedCall {"), "{shown}");
    assert!(
        shown.contains("stage: Arrived(Guard { system: \"sber\""),
        "{shown}"
    );
    assert_eq!(call.await, Ok(Ok(())));
}

/// The retry hint is read only from an error that counts as a failure: a declined
/// request's `Retry-After` (a 429 the port does not count, say) is none of the breaker's
/// business, and its reader is not even called.
#[tokio::test(start_paused = true)]
async fn the_retry_hint_is_read_only_from_errors_that_count() {
    let guard = guard();
    let options = CallOptions::new()
        .failure_if(|e: &PortError| *e == PortError::Outage)
        .retry_after(|e: &PortError| {
            assert_eq!(
                *e,
                PortError::Outage,
                "read for an error that does not count"
            );
            Some(Duration::from_secs(120))
        });
    let declined = guard
        .call_judged(options, async { Err::<u32, _>(PortError::Declined) })
        .await;
    assert_eq!(declined, Ok(Err(PortError::Declined)));
    assert_eq!(guard.breaker().snapshot().failures, 0);
    let outage = guard
        .call_judged(options, async { Err::<u32, _>(PortError::Outage) })
        .await;
    assert_eq!(outage, Ok(Err(PortError::Outage)));
    assert_eq!(guard.breaker().snapshot().failures, 1);
}

/// A running call's deadline is `total_timeout` after it was admitted.
#[tokio::test(start_paused = true)]
async fn a_running_calls_deadline_is_total_timeout_after_its_start() {
    let guard = common::guard("read_timeout = 10\ntotal_timeout = 13");
    let start = tokio::time::Instant::now();
    let mut running = common::running_call(&guard).await.unwrap();
    let mut timer = std::pin::pin!(None);
    let timed_out = std::future::poll_fn(|cx| running.poll_expired(timer.as_mut(), cx)).await;
    assert!(matches!(timed_out.cause(), Cause::Timeout { .. }));
    assert_eq!(tokio::time::Instant::now(), start + Duration::from_secs(13));
}

/// Every outcome the observers hear of.
#[derive(Default)]
struct Outcomes(std::sync::Mutex<Vec<&'static str>>);

impl outbound_guard::Observer for Outcomes {
    fn on_call(&self, call: &outbound_guard::CallEvent<'_>) {
        self.0.lock().unwrap().push(call.outcome.as_str());
    }
}

/// A client holding a call's steps apart finishes it after its timer said it timed out:
/// the call was recorded and reported then, and finishing it reports nothing more.
#[tokio::test(start_paused = true)]
async fn a_running_call_finished_after_it_timed_out_is_not_reported_twice() {
    let outcomes = std::sync::Arc::new(Outcomes::default());
    let settings = common::system("read_timeout = 10\ntotal_timeout = 13");
    let guard = Guard::builder(&settings).observer(outcomes.clone()).build();
    let mut running = common::running_call(&guard).await.unwrap();
    let mut timer = std::pin::pin!(None);
    let timed_out = std::future::poll_fn(|cx| running.poll_expired(timer.as_mut(), cx)).await;
    assert!(matches!(timed_out.cause(), Cause::Timeout { .. }));
    assert_eq!(*outcomes.0.lock().unwrap(), ["timeout"]);
    assert_eq!(running.finish(Verdict::SUCCESS), Ok(()));
    assert_eq!(
        *outcomes.0.lock().unwrap(),
        ["timeout"],
        "the late answer is not a second outcome"
    );
    assert_eq!(guard.breaker().snapshot().calls, 1);
    assert_eq!(guard.in_flight(), 0);
}

/// A call that blocks its thread past `cb_slow_threshold` in its first poll and is
/// ready then never armed the timer that counts slowness while running: the elapsed
/// check at its end counts it slow. (Real time, 80 ms: tokio's paused clock cannot move
/// inside a poll.)
#[tokio::test]
async fn a_call_slow_within_its_first_poll_is_counted_slow_at_its_end() {
    let outcomes = std::sync::Arc::new(Outcomes::default());
    let settings = common::system("cb_slow_threshold = 0.05");
    let guard = Guard::builder(&settings).observer(outcomes.clone()).build();
    let answer = guard
        .call(async {
            std::thread::sleep(Duration::from_millis(80));
            Ok::<_, ()>(())
        })
        .await;
    assert_eq!(answer, Ok(Ok(())), "a slow call's value still comes back");
    assert_eq!(*outcomes.0.lock().unwrap(), ["slow"]);
    assert_eq!(guard.breaker().snapshot().failures, 1);
}

/// The deprecated door still opens onto the same call: judged by the same options.
#[tokio::test(start_paused = true)]
#[allow(deprecated)]
async fn call_with_is_call_judged() {
    let guard = guard();
    let err = guard
        .call_with(CallOptions::new().slow_as_error(), slow_ok())
        .await
        .unwrap_err();
    assert!(matches!(err.cause(), Cause::Slow { .. }), "{err}");
    let options = CallOptions::new().failure_if(|e: &PortError| *e == PortError::Outage);
    let declined = guard
        .call_with(options, async { Err::<(), _>(PortError::Declined) })
        .await;
    assert_eq!(declined.unwrap(), Err(PortError::Declined));
    assert_eq!(guard.breaker().snapshot().failures, 1);
}
