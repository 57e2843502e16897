//! The test-support helpers put a guard into the state they promise, on paused time.

use outbound_guard::Verdict;
use std::time::Duration;

use outbound_guard::{testing, Cause, CircuitBreakerError, State};

mod common;
use common::guard;

#[tokio::test(start_paused = true)]
async fn open_rejects_as_open_with_the_time_left() {
    let guard = guard("cb_open_duration = 20\ncb_min_calls = 5\ncb_window_size = 10");
    testing::open(&guard);
    assert_eq!(guard.breaker().state(), State::Open);
    let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(
        err.cause(),
        &Cause::Open {
            retry_after: Duration::from_secs(20)
        }
    );
}

#[tokio::test(start_paused = true)]
async fn half_open_admits_exactly_the_trial_calls() {
    let guard = guard("cb_half_open_calls = 2");
    testing::half_open(&guard).await;
    assert_eq!(guard.breaker().state(), State::HalfOpen);
    let first = guard.breaker().try_acquire().unwrap();
    let second = guard.breaker().try_acquire().unwrap();
    let third = guard.breaker().try_acquire().unwrap_err();
    assert_eq!(third.cause(), &Cause::HalfOpenFull { trials: 2 });
    first.finish(Verdict::SUCCESS);
    second.finish(Verdict::SUCCESS);
    assert_eq!(guard.breaker().state(), State::Closed);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "did not open")]
async fn open_refuses_a_disabled_breaker() {
    let guard = guard("");
    guard.breaker().act(outbound_guard::ManualAction::Disable);
    testing::open(&guard);
}

#[test]
fn every_cause_can_be_built_for_an_error_map_test() {
    #[derive(Debug, PartialEq)]
    enum PortError {
        Unavailable { retry_after: Option<Duration> },
        TimedOut,
    }
    fn error_map(e: CircuitBreakerError) -> PortError {
        match e.cause() {
            Cause::Timeout { .. } | Cause::Slow { .. } => PortError::TimedOut,
            _ => PortError::Unavailable {
                retry_after: e.retry_after(),
            },
        }
    }
    let d = Duration::from_secs(1);
    let causes = [
        Cause::Open { retry_after: d },
        Cause::HalfOpenFull { trials: 3 },
        Cause::ForcedOpen,
        Cause::BulkheadFull {
            permits: 8,
            waited: d,
        },
        Cause::Timeout { timeout: d },
        Cause::Slow {
            elapsed: d,
            threshold: d,
        },
    ];
    let mapped: Vec<_> = causes
        .iter()
        .map(|c| error_map(CircuitBreakerError::from_cause("sber", *c)))
        .collect();
    assert_eq!(
        mapped[0],
        PortError::Unavailable {
            retry_after: Some(d)
        }
    );
    assert_eq!(mapped[2], PortError::Unavailable { retry_after: None });
    assert_eq!(mapped[4], PortError::TimedOut);
    assert_eq!(mapped[5], PortError::TimedOut);
    assert!(causes
        .iter()
        .all(|c| CircuitBreakerError::from_cause("sber", *c).system() == "sber"));
}
