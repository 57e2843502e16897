//! One paused-time test per circuit-breaker rule of the guide (R-RES-CB-2…5), with the
//! guide's numbers: window 50, min calls 10, 50% (30% critical), open 30 s, 3 trials,
//! slow = read / 2. Nothing sleeps for real: tokio's clock is paused and advanced.

use outbound_guard::Verdict;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{
    Breaker, CallOptions, Cause, CircuitBreakerError, Guard, Observer, Reason, State,
    SystemSettings, Transition, Trials,
};
use tokio::time::{advance, sleep, Instant};

mod common;
use common::{counts, system, S};

/// Records `pattern` ('F' failure, 'S' success), one admitted call per character.
fn feed(breaker: &Breaker, pattern: &str) {
    for c in pattern.chars() {
        let permit = breaker
            .try_acquire()
            .expect("a closed breaker admits every call");
        match c {
            'F' => permit.finish(Verdict::FAILURE),
            'S' => permit.finish(Verdict::SUCCESS),
            _ => panic!("bad pattern"),
        }
    }
}

fn rep(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

fn cause(result: Result<impl std::fmt::Debug, CircuitBreakerError>) -> Cause {
    *result.unwrap_err().cause()
}

/// Opens a default breaker with ten failures.
fn opened(settings: &SystemSettings) -> Breaker {
    let breaker = Breaker::new(settings);
    feed(&breaker, &rep('F', settings.cb_min_calls() as usize));
    assert_eq!(breaker.state(), State::Open);
    breaker
}

#[derive(Default)]
struct Log(Mutex<Vec<(State, State, Reason)>>);

impl Observer for Log {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.from, t.to, t.reason));
    }
}

#[tokio::test(start_paused = true)]
async fn the_guides_defaults_drive_the_breaker() {
    let s = system("");
    assert_eq!(s.cb_window_size(), 50);
    assert_eq!(s.cb_min_calls(), 10);
    assert_eq!(s.cb_failure_rate(), 0.5);
    assert_eq!(s.cb_open_duration(), 30 * S);
    assert_eq!(s.cb_half_open_calls(), 3);
    assert_eq!(s.cb_slow_threshold(), 15 * S);
    let breaker = Breaker::new(&s);
    assert_eq!(counts(&breaker), (State::Closed, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn critical_system_opens_on_3_failures_of_the_first_10() {
    let s = system("cb_failure_rate = 0.30");
    let breaker = Breaker::new(&s);
    // Three failures first: 100% failing, but fewer than 10 calls may not open it.
    feed(&breaker, "FFF");
    assert_eq!(counts(&breaker), (State::Closed, 3, 3));
    feed(&breaker, &rep('S', 6));
    assert_eq!(counts(&breaker), (State::Closed, 3, 9));
    // The 10th call, a success: 3 of 10 = 30% ≥ 30%.
    feed(&breaker, "S");
    assert_eq!(breaker.state(), State::Open);

    // 2 of 10 does not open it, and neither does the 11th call after that.
    let breaker = Breaker::new(&s);
    feed(&breaker, &format!("FF{}", rep('S', 9)));
    assert_eq!(counts(&breaker), (State::Closed, 2, 11));
    // 3 of 12 = 25% < 30%.
    feed(&breaker, "F");
    assert_eq!(counts(&breaker), (State::Closed, 3, 12));
}

#[tokio::test(start_paused = true)]
async fn fifty_percent_opens_at_25_of_50_and_not_at_24_of_50() {
    let log = Arc::new(Log::default());
    let guard = Guard::builder(&system("")).observer(log.clone()).build();
    let breaker = guard.breaker();
    feed(breaker, &rep('S', 26));
    feed(breaker, &rep('F', 24));
    assert_eq!(counts(breaker), (State::Closed, 24, 50));
    assert_eq!(breaker.snapshot().failure_rate, 0.48);
    assert!(log.0.lock().unwrap().is_empty());
    // The 51st outcome pushes the oldest success out: 25 of 50.
    feed(breaker, "F");
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(
        log.0.lock().unwrap().as_slice(),
        &[(
            State::Closed,
            State::Open,
            Reason::FailureRate {
                failures: 25,
                calls: 50,
                threshold: 0.5
            }
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn old_outcomes_fall_out_of_the_ring() {
    // min calls = window, so nothing opens before the ring is full.
    let breaker = Breaker::new(&system("cb_min_calls = 50"));
    feed(&breaker, &rep('F', 24));
    feed(&breaker, &rep('S', 26));
    assert_eq!(counts(&breaker), (State::Closed, 24, 50));
    // 24 more successes push every failure out: only the last 50 count.
    feed(&breaker, &rep('S', 24));
    assert_eq!(counts(&breaker), (State::Closed, 0, 50));
    // Running totals would say 48 / 98 here; the ring says 24 / 50.
    feed(&breaker, &rep('F', 24));
    assert_eq!(counts(&breaker), (State::Closed, 24, 50));
    feed(&breaker, "F");
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn the_ring_evicts_in_order_across_many_wraps() {
    let breaker = Breaker::new(&system(
        "cb_window_size = 7\ncb_min_calls = 7\ncb_failure_rate = 1.0",
    ));
    // A pattern that never has 7 failures in a row among the last 7 outcomes.
    let pattern = "FFSFFFFFFSFFFFFFS".repeat(5);
    let mut last: Vec<bool> = Vec::new();
    for c in pattern.chars() {
        feed(&breaker, &c.to_string());
        last.push(c == 'F');
        if last.len() > 7 {
            last.remove(0);
        }
        let failures = last.iter().filter(|f| **f).count() as u32;
        assert_eq!(
            counts(&breaker),
            (State::Closed, failures, last.len() as u32)
        );
    }
    feed(&breaker, &rep('F', 7));
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn min_calls_is_independent_of_the_window() {
    // Fewer than the window: opens at 20 calls, though the window holds 50.
    let breaker = Breaker::new(&system("cb_min_calls = 20"));
    feed(&breaker, &rep('F', 19));
    assert_eq!(counts(&breaker), (State::Closed, 19, 19));
    feed(&breaker, "F");
    assert_eq!(breaker.state(), State::Open);

    let breaker = Breaker::new(&system("cb_min_calls = 5"));
    feed(&breaker, "FFFF");
    assert_eq!(breaker.state(), State::Closed);
    feed(&breaker, "F");
    assert_eq!(breaker.state(), State::Open);

    // A window smaller than the default min calls.
    let breaker = Breaker::new(&system(
        "cb_window_size = 4\ncb_min_calls = 3\ncb_failure_rate = 0.75",
    ));
    feed(&breaker, "SSSSSSFF");
    assert_eq!(counts(&breaker), (State::Closed, 2, 4));
    feed(&breaker, "F");
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn open_for_30_s_then_half_open_when_due() {
    let log = Arc::new(Log::default());
    let s = system("");
    let guard = Guard::builder(&s).observer(log.clone()).build();
    let breaker = guard.breaker();
    feed(breaker, &rep('F', 10));
    let opened_at = Instant::now();
    assert_eq!(breaker.snapshot().since, opened_at);
    assert_eq!(breaker.snapshot().retry_after, Some(30 * S));
    assert_eq!(
        cause(breaker.try_acquire()),
        Cause::Open {
            retry_after: 30 * S
        }
    );

    advance(30 * S - Duration::from_millis(1)).await;
    assert_eq!(
        cause(breaker.try_acquire()),
        Cause::Open {
            retry_after: Duration::from_millis(1)
        }
    );
    assert_eq!(breaker.state(), State::Open);

    advance(Duration::from_millis(1)).await;
    // Due: a reading says what the next call will find (half-open, no trial admitted
    // yet), never "open, retry in 0 s".
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(breaker.snapshot().retry_after, None);
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 0,
            succeeded: 0
        }
    );
    let trial = breaker
        .try_acquire()
        .expect("the first call after 30 s is a trial");
    let snap = breaker.snapshot();
    assert_eq!(snap.state, State::HalfOpen);
    assert_eq!(
        snap.trials,
        Trials {
            admitted: 1,
            succeeded: 0
        }
    );
    assert_eq!(snap.since, opened_at + 30 * S);
    assert_eq!(snap.retry_after, None);
    drop(trial);
    let log = log.0.lock().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[1],
        (
            State::Open,
            State::HalfOpen,
            Reason::OpenElapsed {
                after: Duration::from_secs(30)
            }
        )
    );
}

#[tokio::test(start_paused = true)]
async fn exactly_3_trials_are_admitted_the_4th_is_rejected() {
    let s = system("");
    let breaker = opened(&s);
    advance(30 * S).await;
    let a = breaker.try_acquire().unwrap();
    let b = breaker.try_acquire().unwrap();
    let c = breaker.try_acquire().unwrap();
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 0
        }
    );
    for _ in 0..5 {
        assert_eq!(
            cause(breaker.try_acquire()),
            Cause::HalfOpenFull { trials: 3 }
        );
    }
    // Not concurrent: two trials done, the third still out, a fourth is still refused.
    a.finish(Verdict::SUCCESS);
    b.finish(Verdict::SUCCESS);
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 2
        }
    );
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(
        cause(breaker.try_acquire()),
        Cause::HalfOpenFull { trials: 3 }
    );
    c.finish(Verdict::SUCCESS);
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn exactly_3_of_10_concurrent_callers_are_trials() {
    let s = system("max_connections = 20");
    let guard = Guard::new(&s);
    for _ in 0..10 {
        let r = guard.call(async { Err::<(), _>("down") }).await.unwrap();
        assert!(r.is_err());
    }
    assert_eq!(guard.breaker().state(), State::Open);
    advance(30 * S).await;

    let (release, wait) = tokio::sync::watch::channel(false);
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let guard = guard.clone();
        let mut wait = wait.clone();
        tasks.push(tokio::spawn(async move {
            guard
                .call(async move {
                    wait.wait_for(|go| *go).await.unwrap();
                    Ok::<_, ()>(())
                })
                .await
        }));
    }
    // Let every task reach its await point (paused time runs them all first).
    sleep(Duration::from_millis(1)).await;
    assert_eq!(
        guard.breaker().snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 0
        }
    );
    assert_eq!(guard.in_flight(), 3);
    release.send(true).unwrap();
    let mut admitted = 0;
    let mut rejected = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(Ok(())) => admitted += 1,
            Err(e) => {
                assert_eq!(*e.cause(), Cause::HalfOpenFull { trials: 3 });
                rejected += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((admitted, rejected), (3, 7));
    assert_eq!(guard.breaker().state(), State::Closed);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn all_trials_succeed_closed_with_an_empty_window() {
    let log = Arc::new(Log::default());
    let s = system("");
    let guard = Guard::builder(&s).observer(log.clone()).build();
    let breaker = guard.breaker();
    // Some successes before opening, so that a window that is not cleared shows.
    feed(breaker, &rep('S', 10));
    feed(breaker, &rep('F', 10));
    assert_eq!(breaker.state(), State::Open);
    advance(30 * S).await;
    for _ in 0..3 {
        breaker.try_acquire().unwrap().finish(Verdict::SUCCESS);
    }
    let snap = breaker.snapshot();
    assert_eq!(
        (snap.state, snap.failures, snap.calls),
        (State::Closed, 0, 0)
    );
    assert_eq!(snap.failure_rate, 0.0);
    assert_eq!(
        log.0.lock().unwrap().last().unwrap(),
        &(
            State::HalfOpen,
            State::Closed,
            Reason::TrialsSucceeded { trials: 3 }
        )
    );
    // A fresh window: min calls again before it may open.
    feed(breaker, &rep('F', 9));
    assert_eq!(counts(breaker), (State::Closed, 9, 9));
    feed(breaker, "F");
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn any_trial_fails_open_for_a_full_30_s_again() {
    let log = Arc::new(Log::default());
    let s = system("");
    let guard = Guard::builder(&s).observer(log.clone()).build();
    let breaker = guard.breaker();
    feed(breaker, &rep('F', 10));
    advance(30 * S).await;
    let a = breaker.try_acquire().unwrap();
    let b = breaker.try_acquire().unwrap();
    let c = breaker.try_acquire().unwrap();
    a.finish(Verdict::SUCCESS);
    advance(5 * S).await;
    b.finish(Verdict::FAILURE);
    assert_eq!(breaker.state(), State::Open);
    // A full 30 s from the failure, not from when it first opened or went half-open.
    assert_eq!(breaker.snapshot().retry_after, Some(30 * S));
    assert_eq!(
        log.0.lock().unwrap().last().unwrap(),
        &(
            State::HalfOpen,
            State::Open,
            Reason::TrialFailed {
                succeeded: 1,
                trials: 3
            }
        )
    );
    // The last trial's success belongs to the half-open that just ended.
    c.finish(Verdict::SUCCESS);
    assert_eq!(breaker.state(), State::Open);
    advance(30 * S - Duration::from_nanos(1)).await;
    assert!(matches!(cause(breaker.try_acquire()), Cause::Open { .. }));
    advance(Duration::from_nanos(1)).await;
    let trial = breaker.try_acquire().unwrap();
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 1,
            succeeded: 0
        }
    );
    // And a failing trial on its own opens it again.
    trial.finish(Verdict::FAILURE);
    assert_eq!(breaker.snapshot().retry_after, Some(30 * S));
}

#[tokio::test(start_paused = true)]
async fn a_call_slower_than_read_over_2_counts_as_a_failure_and_returns_its_value() {
    let s = system("read_timeout = 30");
    assert_eq!(s.cb_slow_threshold(), 15 * S);
    let guard = Guard::new(&s);
    let start = Instant::now();
    let value = guard
        .call(async {
            sleep(16 * S).await;
            Ok::<_, ()>(42)
        })
        .await;
    assert_eq!(value, Ok(Ok(42)));
    assert_eq!(start.elapsed(), 16 * S);
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 1));

    // Exactly the threshold is not slower than it.
    let value = guard
        .call(async {
            sleep(15 * S).await;
            Ok::<_, ()>(1)
        })
        .await;
    assert_eq!(value, Ok(Ok(1)));
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 2));

    // The threshold follows read_timeout.
    let guard = Guard::new(&system("read_timeout = 10\ntotal_timeout = 12"));
    let value = guard
        .call(async {
            sleep(5 * S + Duration::from_millis(1)).await;
            Ok::<_, ()>(())
        })
        .await;
    assert_eq!(value, Ok(Ok(())));
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn slow_calls_alone_open_the_breaker() {
    let guard = Guard::new(&system(""));
    for _ in 0..9 {
        let r = guard
            .call(async {
                sleep(16 * S).await;
                Ok::<_, ()>(())
            })
            .await;
        assert_eq!(r, Ok(Ok(())));
    }
    assert_eq!(counts(guard.breaker()), (State::Closed, 9, 9));
    let _ = guard
        .call(async {
            sleep(16 * S).await;
            Ok::<_, ()>(())
        })
        .await;
    assert_eq!(guard.breaker().state(), State::Open);
    let r = guard.call(async { Ok::<_, ()>(()) }).await;
    assert!(matches!(cause(r), Cause::Open { .. }));
}

#[tokio::test(start_paused = true)]
async fn slow_as_error_returns_cause_slow() {
    let guard = Guard::new(&system(""));
    let slow_as_error = CallOptions::new().slow_as_error();
    let err = guard
        .call_judged(slow_as_error, async {
            sleep(16 * S).await;
            Ok::<_, ()>(42)
        })
        .await
        .unwrap_err();
    assert_eq!(
        *err.cause(),
        Cause::Slow {
            elapsed: 16 * S,
            threshold: 15 * S
        }
    );
    assert_eq!(err.system(), "sber");
    assert!(!err.is_rejection());
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 1));
    assert_eq!(guard.in_flight(), 0);

    // A fast call with slow_as_error is a plain success.
    let r = guard
        .call_judged(slow_as_error, async { Ok::<_, ()>(7) })
        .await;
    assert_eq!(r, Ok(Ok(7)));
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 2));
}

struct DropFlag(Arc<Mutex<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = true;
    }
}

#[tokio::test(start_paused = true)]
async fn the_total_timeout_cancels_the_call_and_counts_a_failure() {
    let s = system("");
    assert_eq!(s.total_timeout(), 35 * S);
    let guard = Guard::new(&s);
    let dropped = Arc::new(Mutex::new(false));
    let flag = DropFlag(dropped.clone());
    let finished_body = Arc::new(Mutex::new(false));
    let body = finished_body.clone();
    let start = Instant::now();
    let r = guard
        .call(async move {
            let _flag = flag;
            sleep(100 * S).await;
            *body.lock().unwrap() = true;
            Ok::<_, ()>(())
        })
        .await;
    assert_eq!(start.elapsed(), 35 * S);
    let err = r.unwrap_err();
    assert_eq!(*err.cause(), Cause::Timeout { timeout: 35 * S });
    assert!(!err.is_rejection());
    assert!(*dropped.lock().unwrap(), "the call's future was dropped");
    assert!(!*finished_body.lock().unwrap());
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 1));
    assert_eq!(guard.in_flight(), 0);

    // Ten timeouts open it.
    for _ in 0..9 {
        let r = guard.call(std::future::pending::<Result<(), ()>>()).await;
        assert!(matches!(cause(r), Cause::Timeout { .. }));
    }
    assert_eq!(guard.breaker().state(), State::Open);
}

#[derive(Debug, PartialEq)]
enum PayError {
    Declined,
    Outage,
}

/// Only an outage counts against the breaker; a declined payment is the system answering.
fn outage_only() -> CallOptions<PayError> {
    CallOptions::new().failure_if(|e| *e != PayError::Declined)
}

#[tokio::test(start_paused = true)]
async fn the_failure_predicate_makes_a_business_error_a_success() {
    let guard = Guard::new(&system(""));
    let run = |e: PayError| {
        let guard = guard.clone();
        async move {
            guard
                .call_judged(outage_only(), async { Err::<(), _>(e) })
                .await
        }
    };
    for _ in 0..20 {
        assert_eq!(run(PayError::Declined).await, Ok(Err(PayError::Declined)));
    }
    assert_eq!(counts(guard.breaker()), (State::Closed, 0, 20));
    assert_eq!(run(PayError::Outage).await, Ok(Err(PayError::Outage)));
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 21));

    // Without a predicate every `Err` counts.
    let r = guard.call(async { Err::<(), _>(PayError::Declined) }).await;
    assert_eq!(r, Ok(Err(PayError::Declined)));
    assert_eq!(counts(guard.breaker()), (State::Closed, 2, 22));

    // A business error that is also slow still counts as slow.
    let r = guard
        .call_judged(outage_only(), async {
            sleep(16 * S).await;
            Err::<(), _>(PayError::Declined)
        })
        .await;
    assert_eq!(r, Ok(Err(PayError::Declined)));
    assert_eq!(counts(guard.breaker()), (State::Closed, 3, 23));
}

#[tokio::test(start_paused = true)]
async fn a_call_admitted_while_closed_that_ends_after_opening_is_ignored() {
    let s = system("");
    let breaker = Breaker::new(&s);
    let late_failure = breaker.try_acquire().unwrap();
    let late_success = breaker.try_acquire().unwrap();
    let late_while_half_open = breaker.try_acquire().unwrap();
    let late_drop = breaker.try_acquire().unwrap();
    feed(&breaker, &rep('F', 10));
    assert_eq!(breaker.state(), State::Open);
    advance(10 * S).await;
    let before = breaker.snapshot();
    late_failure.finish(Verdict::FAILURE);
    late_success.finish(Verdict::SUCCESS);
    drop(late_drop);
    assert_eq!(breaker.snapshot(), before);
    assert_eq!(before.retry_after, Some(20 * S));

    advance(20 * S).await;
    let t1 = breaker.try_acquire().unwrap();
    let t2 = breaker.try_acquire().unwrap();
    // A closed-state call is not a trial: it neither completes nor fails half-open.
    late_while_half_open.finish(Verdict::FAILURE);
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 2,
            succeeded: 0
        }
    );
    t1.finish(Verdict::SUCCESS);
    t2.finish(Verdict::SUCCESS);
    breaker.try_acquire().unwrap().finish(Verdict::SUCCESS);
    assert_eq!(counts(&breaker), (State::Closed, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_trial_from_an_earlier_half_open_is_ignored() {
    let s = system("");
    let breaker = opened(&s);
    advance(30 * S).await;
    let old_ok = breaker.try_acquire().unwrap();
    let old_fail = breaker.try_acquire().unwrap();
    let old_drop = breaker.try_acquire().unwrap();
    breaker.try_acquire().unwrap_err();
    old_fail.finish(Verdict::FAILURE);
    assert_eq!(breaker.state(), State::Open);
    advance(30 * S).await;
    let new1 = breaker.try_acquire().unwrap();
    let new2 = breaker.try_acquire().unwrap();
    let new3 = breaker.try_acquire().unwrap();
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 0
        }
    );
    // The old cycle's permit dropped: no slot of the new cycle is freed.
    drop(old_drop);
    assert_eq!(
        cause(breaker.try_acquire()),
        Cause::HalfOpenFull { trials: 3 }
    );
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 0
        }
    );
    // The old cycle's success is not one of the new cycle's successes.
    old_ok.finish(Verdict::SUCCESS);
    assert_eq!(
        breaker.snapshot().trials,
        Trials {
            admitted: 3,
            succeeded: 0
        }
    );
    new1.finish(Verdict::SUCCESS);
    new2.finish(Verdict::SUCCESS);
    assert_eq!(breaker.state(), State::HalfOpen);
    new3.finish(Verdict::SUCCESS);
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn an_old_trial_failure_does_not_reopen_a_later_cycle() {
    let s = system("");
    let breaker = opened(&s);
    advance(30 * S).await;
    let stale = breaker.try_acquire().unwrap();
    let failing = breaker.try_acquire().unwrap();
    failing.finish(Verdict::FAILURE);
    advance(30 * S).await;
    let fresh = breaker.try_acquire().unwrap();
    stale.finish(Verdict::FAILURE);
    assert_eq!(breaker.state(), State::HalfOpen);
    fresh.finish(Verdict::SUCCESS);
    breaker.try_acquire().unwrap().finish(Verdict::SUCCESS);
    breaker.try_acquire().unwrap().finish(Verdict::SUCCESS);
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn retry_after_shrinks_with_time() {
    let guard = Guard::new(&system(""));
    for _ in 0..10 {
        let _ = guard.call(async { Err::<(), _>(()) }).await;
    }
    let mut last = Duration::MAX;
    for step in [0, 1, 9, 10, 5, 4] {
        advance(step * S).await;
        let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
        let retry = err.retry_after().unwrap();
        assert!(err.is_rejection());
        assert!(retry < last || step == 0, "{retry:?} after {last:?}");
        assert_eq!(Some(retry), guard.breaker().snapshot().retry_after);
        last = retry;
    }
    assert_eq!(last, S);
    // Only rejections: nothing was counted and no permit is held.
    assert_eq!(guard.in_flight(), 0);
    advance(S).await;
    assert_eq!(guard.call(async { Ok::<_, ()>(5) }).await, Ok(Ok(5)));
    assert_eq!(
        guard.breaker().snapshot().trials,
        Trials {
            admitted: 1,
            succeeded: 1
        }
    );
}

#[tokio::test(start_paused = true)]
async fn manual_actions() {
    let log = Arc::new(Log::default());
    let guard = Guard::builder(&system("")).observer(log.clone()).build();
    let breaker = guard.breaker();
    feed(breaker, "FFFFF");
    breaker.act(outbound_guard::ManualAction::ForceOpen);
    assert_eq!(cause(breaker.try_acquire()), Cause::ForcedOpen);
    advance(3600 * S).await;
    assert_eq!(cause(breaker.try_acquire()), Cause::ForcedOpen);
    breaker.act(outbound_guard::ManualAction::Disable);
    // Disabled: everything flows, nothing counts.
    feed(breaker, &rep('F', 100));
    assert_eq!(counts(breaker), (State::Disabled, 0, 0));
    breaker.act(outbound_guard::ManualAction::Reset);
    assert_eq!(counts(breaker), (State::Closed, 0, 0));
    feed(breaker, &rep('F', 9));
    assert_eq!(breaker.state(), State::Closed);
    let log = log.0.lock().unwrap();
    let reasons: Vec<_> = log.iter().map(|(f, t, _)| (*f, *t)).collect();
    assert_eq!(
        reasons,
        [
            (State::Closed, State::ForcedOpen),
            (State::ForcedOpen, State::Disabled),
            (State::Disabled, State::Closed),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn peek_reads_without_the_due_transition_that_state_makes() {
    let log = Arc::new(Log::default());
    let guard = Guard::builder(&system(
        "cb_window_size = 2\ncb_min_calls = 2\ncb_open_duration = 30",
    ))
    .observer(log.clone())
    .build();
    let breaker = guard.breaker();
    breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    let heard = log.0.lock().unwrap().len();
    advance(30 * S).await;
    // Due, but only peeked at: still open, nothing left to wait, nobody told.
    let peeked = breaker.peek();
    assert_eq!(
        (peeked.state, peeked.retry_after),
        (State::Open, Some(Duration::ZERO))
    );
    assert_eq!(log.0.lock().unwrap().len(), heard, "peek tells no observer");
    // A reading makes the transition, and the observers hear of it.
    assert_eq!(breaker.snapshot().state, State::HalfOpen);
    assert_eq!(log.0.lock().unwrap().len(), heard + 1);
    assert_eq!(breaker.peek().state, State::HalfOpen);
}

/// A call admitted before an operator's force-open and reset ends after them: its
/// outcome belongs to the earlier window and is not counted in the new one; a call
/// admitted while disabled counts in no window.
#[tokio::test(start_paused = true)]
async fn an_outcome_from_before_a_reset_or_while_disabled_is_not_counted() {
    let breaker = Breaker::new(&system(""));
    let stale = breaker.try_acquire().unwrap();
    assert!(breaker.act(outbound_guard::ManualAction::ForceOpen));
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    stale.finish(Verdict::FAILURE);
    assert_eq!(
        (breaker.snapshot().failures, breaker.snapshot().calls),
        (0, 0),
        "the stale outcome stayed out of the new window"
    );
    assert!(breaker.act(outbound_guard::ManualAction::Disable));
    let while_disabled = breaker.try_acquire().unwrap();
    while_disabled.finish(Verdict::FAILURE);
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    assert_eq!(breaker.snapshot().calls, 0);
}

/// resilience4j's `shouldResetClosedState` (CircuitBreakerStateMachineTest): two
/// successes counted, a reset, none counted, still closed.
#[tokio::test(start_paused = true)]
async fn a_reset_of_a_closed_breaker_forgets_its_counted_outcomes() {
    let log = Arc::new(Log::default());
    let guard = Guard::builder(&system("")).observer(log.clone()).build();
    let breaker = guard.breaker();
    feed(breaker, "SS");
    assert_eq!(counts(breaker), (State::Closed, 0, 2));
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    assert_eq!(counts(breaker), (State::Closed, 0, 0));
    assert!(
        log.0.lock().unwrap().is_empty(),
        "no closed → closed transition"
    );
    // Nothing left to forget: a no-op.
    assert!(!breaker.act(outbound_guard::ManualAction::Reset));
}

/// tower-resilience's `reset_clears_counters_count_based`: 4 failures (not enough to
/// open), a reset, 4 more: still closed, since only 4 are in the window. Here with the
/// guide's numbers: a deploy's burst of 4 failures in 10 calls, then the reset; without
/// it, two more failures find 6 of 12 and open it.
#[tokio::test(start_paused = true)]
async fn a_reset_clears_the_counts_so_the_next_failures_start_afresh() {
    let breaker = Breaker::new(&system(""));
    feed(&breaker, "SSSSSSFFFF");
    assert_eq!(counts(&breaker), (State::Closed, 4, 10));
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    feed(&breaker, "FFFF");
    assert_eq!(counts(&breaker), (State::Closed, 4, 4));
    feed(&breaker, "FF");
    assert_eq!(
        counts(&breaker),
        (State::Closed, 6, 6),
        "under cb_min_calls"
    );
    // The same without the reset opens on the 12th outcome.
    let kept = Breaker::new(&system(""));
    feed(&kept, "SSSSSSFFFF");
    feed(&kept, "FF");
    assert_eq!(kept.state(), State::Open);
}

/// A reset in every state empties the window and the trials (resilience4j's
/// `shouldResetToClosedState`, tower-resilience's `reset_from_open`), and half-open's
/// trials start again from none at the next opening.
#[tokio::test(start_paused = true)]
async fn a_reset_from_half_open_forgets_the_trials() {
    let breaker = opened(&system(""));
    advance(30 * S).await;
    let trial = breaker.try_acquire().unwrap();
    trial.finish(Verdict::SUCCESS);
    assert_eq!(breaker.snapshot().trials.succeeded, 1);
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.state, snapshot.calls, snapshot.trials),
        (State::Closed, 0, Trials::default())
    );
}

/// Calls admitted before a reset of a closed breaker end after it: their outcomes belong
/// to the forgotten window and do not land in the fresh one (as after any transition),
/// whether they end one by one or all together; calls admitted after the reset count.
#[tokio::test(start_paused = true)]
async fn outcomes_in_flight_across_a_reset_of_a_closed_breaker_do_not_land() {
    let breaker = Breaker::new(&system(""));
    feed(&breaker, "SSSSSSFFF");
    let in_flight: Vec<_> = (0..5).map(|_| breaker.try_acquire().unwrap()).collect();
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    let after = breaker.try_acquire().unwrap();
    for permit in in_flight {
        permit.finish(Verdict::FAILURE);
    }
    assert_eq!(
        counts(&breaker),
        (State::Closed, 0, 0),
        "the stale failures stayed out"
    );
    after.finish(Verdict::FAILURE);
    assert_eq!(counts(&breaker), (State::Closed, 1, 1));
}

/// Concurrent callers across a reset (tower-resilience's
/// `reset_during_concurrent_operations`): every outcome lands in the window of the
/// generation it was admitted in, or nowhere; the breaker never counts more outcomes
/// than calls admitted after the reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_during_concurrent_calls_keeps_the_counts_consistent() {
    let breaker = Arc::new(Breaker::new(&system(
        "cb_window_size = 1000\ncb_min_calls = 1000",
    )));
    let admitted_after = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let reset_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let (breaker, admitted_after, reset_done) =
            (breaker.clone(), admitted_after.clone(), reset_done.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..300 {
                let after = reset_done.load(std::sync::atomic::Ordering::SeqCst);
                let permit = breaker.try_acquire().unwrap();
                if after {
                    admitted_after.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                tokio::task::yield_now().await;
                permit.finish(Verdict::FAILURE);
            }
        }));
    }
    tokio::task::yield_now().await;
    breaker.act(outbound_guard::ManualAction::Reset);
    reset_done.store(true, std::sync::atomic::Ordering::SeqCst);
    for task in tasks {
        task.await.unwrap();
    }
    let (state, failures, calls) = counts(&breaker);
    assert_eq!(state, State::Closed);
    assert_eq!(failures, calls);
    assert!(calls >= admitted_after.load(std::sync::atomic::Ordering::SeqCst));
    assert!(calls <= 600);
}

/// The one rule of reset, whatever the window held: outcomes of calls admitted before it
/// never land after it. Twenty calls admitted into an empty closed window, a reset while
/// all twenty run, then all twenty fail: nothing is counted, the breaker stays closed.
#[tokio::test(start_paused = true)]
async fn a_reset_of_an_empty_closed_window_forgets_the_calls_in_flight_too() {
    let breaker = Breaker::new(&system("cb_window_size = 20\ncb_min_calls = 10"));
    let in_flight: Vec<_> = (0..20).map(|_| breaker.try_acquire().unwrap()).collect();
    assert_eq!(counts(&breaker), (State::Closed, 0, 0));
    assert!(
        !breaker.act(outbound_guard::ManualAction::Reset),
        "nothing a user can see changed: no log line, no series"
    );
    for permit in in_flight {
        permit.finish(Verdict::FAILURE);
    }
    assert_eq!(
        counts(&breaker),
        (State::Closed, 0, 0),
        "the failures of calls admitted before the reset stayed out"
    );
    breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    assert_eq!(counts(&breaker), (State::Closed, 1, 1), "later ones count");
}
