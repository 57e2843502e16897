//! Annotated adapters through reqwest against real HTTP servers on 127.0.0.1,
//! with faults switched per test. Each test asserts exactly when the breaker opens (in
//! calls, from the settings), that a rejected call never reaches the server (server-side
//! hit counts), what the caller gets (the port's error), and that time-based steps
//! (slow check, total timeout, open duration) happen in the right order.
//!
//! Real sockets, so real time: durations are small and assertions are about order and
//! counts, with generous upper bounds for busy CI machines.

use std::sync::Arc;
use std::time::{Duration, Instant};

use outbound_guard::{Cause, Guard, Guards, Settings, State};
use outbound_guard_tests::adapters::{CustomerAdapter, PortError, SberAdapter};
use outbound_guard_tests::recorder::Recorder;
use outbound_guard_tests::upstream::{refused_addr, FakeUpstream, Fault, Mode, ResetServer};

mod common;
use common::{eventually, recorded_guards};

/// The `sber` system with the guide's rules at small timings: window 10, at least 10
/// calls, 30% (a critical system), open 250 ms, 3 trials, slow above 100 ms, total
/// timeout 400 ms, 8 bulkhead permits.
const SBER: &str = "
[systems.sber]
connect_timeout = 0.1
read_timeout = 0.3
total_timeout = 0.4
cb_slow_threshold = 0.1
cb_window_size = 10
cb_min_calls = 10
cb_failure_rate = 0.30
cb_open_duration = 0.25
cb_half_open_calls = 3
max_connections = 10

[systems.customer]
connect_timeout = 0.1
read_timeout = 0.3
total_timeout = 0.4
cb_slow_threshold = 0.1
";

/// Guards for [`SBER`] with `overrides` applied to `sber` through environment
/// variables (`("cb_min_calls", "5")` is `CLIENT_SBER__CB_MIN_CALLS=5`), and a recorder.
fn guards(overrides: &[(&str, &str)]) -> (Guards, Arc<Recorder>) {
    let env: Vec<(String, String)> = overrides
        .iter()
        .map(|(key, value)| {
            (
                format!("CLIENT_SBER__{}", key.to_ascii_uppercase()),
                (*value).to_owned(),
            )
        })
        .collect();
    let settings = Settings::load_with_env(SBER, "inline", env).expect("valid test settings");
    recorded_guards(&settings)
}

fn sber_guard(overrides: &[(&str, &str)]) -> (Guard, Arc<Recorder>) {
    let (guards, recorder) = guards(overrides);
    (guards.get("sber").expect("sber is declared"), recorder)
}

/// A fresh server and a `sber` adapter calling it.
async fn sber_rig(overrides: &[(&str, &str)]) -> (FakeUpstream, SberAdapter, Arc<Recorder>) {
    let server = FakeUpstream::start().await;
    let (guard, recorder) = sber_guard(overrides);
    let adapter = SberAdapter::new(guard, &server.url());
    (server, adapter, recorder)
}

fn state(adapter: &SberAdapter) -> State {
    adapter.system_guard().breaker().state()
}

/// The caller got the port's error for an open breaker, naming the system.
fn assert_open_rejection(result: Result<String, PortError>) {
    match result {
        Err(PortError::Unavailable(e)) => {
            assert_eq!(e.system(), "sber");
            assert!(matches!(e.cause(), Cause::Open { .. }), "{e}");
            assert!(e.is_rejection());
        }
        other => panic!("expected the mapped open rejection, got {other:?}"),
    }
}

/// Calls `register` `n` times in sequence, checking the breaker stays closed before the
/// last one; returns the results.
async fn calls(adapter: &SberAdapter, n: u64) -> Vec<Result<String, PortError>> {
    let mut results = Vec::new();
    for i in 1..=n {
        assert_eq!(state(adapter), State::Closed, "closed before call {i}");
        results.push(adapter.register(i).await);
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_burst_opens_on_exactly_the_10th_call_and_the_11th_never_reaches_the_server() {
    let (server, adapter, recorder) = sber_rig(&[]).await;
    // 7 good answers, then a burst of three 503s: 3/10 = 30% on the 10th call.
    server.script([Fault::Ok; 7]);
    server.script([Fault::Status(503); 3]);
    let results = calls(&adapter, 9).await;
    assert!(results[..7].iter().all(Result::is_ok));
    assert!(matches!(results[7], Err(PortError::Upstream(503))));
    assert_eq!(
        state(&adapter),
        State::Closed,
        "2 failures in 9 calls: under 30%"
    );
    let tenth = adapter.register(10).await;
    assert!(matches!(tenth, Err(PortError::Upstream(503))), "{tenth:?}");
    assert_eq!(state(&adapter), State::Open, "3 failures in 10 calls: 30%");
    assert_eq!(server.hits(), 10);

    for i in 11..=20 {
        assert_open_rejection(adapter.register(i).await);
    }
    assert_eq!(server.hits(), 10, "no rejected call reached the server");
    let counts = recorder.counts();
    assert_eq!((counts.success, counts.failure), (7, 3));
    assert_eq!(counts.rejected_open, 10);
    assert_eq!(
        recorder.transitions_of("sber"),
        vec![(State::Closed, State::Open)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_before_min_calls_wait_for_the_10th_call_even_if_it_succeeds() {
    let (server, adapter, _) = sber_rig(&[]).await;
    // A burst of three first: 3/3 is 100%, but the window needs 10 outcomes.
    server.script([Fault::Status(500); 3]);
    let results = calls(&adapter, 9).await;
    assert_eq!(results.iter().filter(|r| r.is_err()).count(), 3);
    assert_eq!(state(&adapter), State::Closed);
    assert_eq!(
        adapter.register(10).await.unwrap(),
        "ok",
        "the 10th call itself succeeds"
    );
    assert_eq!(state(&adapter), State::Open, "and its outcome makes 3/10");
    assert_open_rejection(adapter.register(11).await);
    assert_eq!(server.hits(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_min_calls_below_the_window_it_opens_as_soon_as_the_rate_is_reached() {
    // Window 10, at least 5 calls, 50%.
    let (server, adapter, _) = sber_rig(&[("cb_min_calls", "5"), ("cb_failure_rate", "0.5")]).await;
    let (f, o) = (Fault::Status(502), Fault::Ok);
    server.script([f, f, o, o, o, f]);
    calls(&adapter, 5).await; // 2/5 = 40%
    assert_eq!(state(&adapter), State::Closed);
    assert!(adapter.register(6).await.is_err());
    assert_eq!(state(&adapter), State::Open, "3/6 = 50% on the 6th call");
    assert_eq!(server.hits(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_of_5xx_under_the_rate_never_opens_and_over_it_opens_on_the_10th_call() {
    // 1 in 5 failing (20%): any 10 consecutive calls hold exactly 2 failures.
    let (server, adapter, recorder) = sber_rig(&[]).await;
    server.set(Mode::Flap {
        down: 1,
        up: 4,
        status: 500,
    });
    calls(&adapter, 60).await;
    assert_eq!(state(&adapter), State::Closed);
    assert_eq!(server.hits(), 60);
    assert_eq!(recorder.counts().failure, 12);
    let snapshot = adapter.system_guard().breaker().snapshot();
    assert_eq!(
        (snapshot.failures, snapshot.calls),
        (2, 10),
        "the window is the last 10"
    );

    // 1 in 4 failing (25%): failures on calls 1, 5 and 9 make 3/10 on the 10th.
    let (server, adapter, _) = sber_rig(&[]).await;
    server.set(Mode::Flap {
        down: 1,
        up: 3,
        status: 500,
    });
    calls(&adapter, 10).await;
    assert_eq!(state(&adapter), State::Open);
    assert_open_rejection(adapter.register(11).await);
    assert_eq!(server.hits(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_answers_open_it_before_any_call_times_out() {
    // 20 permits, so ten calls run at once; every answer takes 200 ms: over the 100 ms
    // slow threshold, well under the 400 ms total timeout.
    let (server, adapter, recorder) = sber_rig(&[("max_connections", "25")]).await;
    server.always(Fault::Delay(Duration::from_millis(200)));
    let started = Instant::now();
    let results = futures_util::future::join_all((1..=10).map(|i| adapter.register(i))).await;
    let elapsed = started.elapsed();
    // The answers came back (a slow payment that went through is not reported failed)...
    assert!(
        results.iter().all(|r| r.as_deref().ok() == Some("ok")),
        "{results:?}"
    );
    // ...each slowness counted, none of them a timeout, and the tenth opened it.
    let counts = recorder.counts();
    assert_eq!((counts.slow, counts.timeout, counts.failure), (10, 0, 0));
    assert_eq!(state(&adapter), State::Open);
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert_open_rejection(adapter.register(11).await);
    assert_eq!(server.hits(), 10);

    // `slow_as_error`: the guide's literal behaviour returns the slowness as the error.
    let (server, adapter, _) = sber_rig(&[]).await;
    server.always(Fault::Delay(Duration::from_millis(150)));
    match adapter.register_strict(1).await {
        Err(PortError::Unavailable(e)) => match e.cause() {
            Cause::Slow { elapsed, threshold } => {
                assert_eq!(*threshold, Duration::from_millis(100));
                assert!(*elapsed >= Duration::from_millis(150));
                assert!(*elapsed < Duration::from_millis(400));
            }
            other => panic!("expected Cause::Slow, got {other:?}"),
        },
        other => panic!("expected the mapped slow error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_forever_is_cut_at_the_total_timeout_and_counted() {
    // One byte every 50 ms: every read succeeds within the 300 ms read timeout, so only
    // the guard's 400 ms total timeout can end the call.
    let (server, adapter, recorder) = sber_rig(&[]).await;
    server.always(Fault::Trickle(Duration::from_millis(50)));
    let started = Instant::now();
    let result = adapter.register(1).await;
    let elapsed = started.elapsed();
    match &result {
        Err(PortError::Unavailable(e)) => {
            assert_eq!(
                *e.cause(),
                Cause::Timeout {
                    timeout: Duration::from_millis(400)
                }
            );
            assert!(!e.is_rejection(), "started and cut short, not rejected");
        }
        other => panic!("expected the mapped timeout, got {other:?}"),
    }
    assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert_eq!(recorder.counts().timeout, 1);
    let snapshot = adapter.system_guard().breaker().snapshot();
    assert_eq!(
        (snapshot.failures, snapshot.calls),
        (1, 1),
        "the timeout is counted"
    );
    assert_eq!(adapter.system_guard().in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_hang_ends_at_the_read_timeout_before_the_total_timeout_and_is_counted() {
    let (server, adapter, recorder) = sber_rig(&[]).await;
    server.always(Fault::Hang);
    let started = Instant::now();
    let result = adapter.register(1).await;
    let elapsed = started.elapsed();
    assert!(matches!(result, Err(PortError::Transport(_))), "{result:?}");
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    let counts = recorder.counts();
    // 300 ms is over the 100 ms slow threshold too, but a failure is a failure.
    assert_eq!((counts.failure, counts.timeout), (1, 0));
    assert_eq!(adapter.system_guard().breaker().snapshot().failures, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hangs_open_it_at_the_slow_threshold_and_time_out_at_total_timeout() {
    // Window 10, 5 calls minimum: five hung calls at once. Each is counted as slow when
    // it passes the 100 ms threshold, still running, so the breaker opens then; the
    // calls themselves end at the 400 ms total timeout.
    let (server, adapter, recorder) = sber_rig(&[
        ("cb_min_calls", "5"),
        ("max_connections", "10"),
        ("cb_open_duration", "5"),
    ])
    .await;
    server.always(Fault::Trickle(Duration::from_millis(50)));
    let started = tokio::time::Instant::now();
    let results = futures_util::future::join_all((1..=5).map(|i| adapter.register(i))).await;
    for result in &results {
        assert!(
            matches!(
                result.as_ref().err().and_then(PortError::cause),
                Some(Cause::Timeout { .. })
            ),
            "{result:?}"
        );
    }
    assert_eq!(recorder.counts().timeout, 5);
    assert_eq!(state(&adapter), State::Open);
    let opened = adapter.system_guard().breaker().snapshot().since - started;
    assert!(
        opened >= Duration::from_millis(100) && opened < Duration::from_millis(400),
        "opened {opened:?} in: at the slow threshold, before the total timeout"
    );
    assert_open_rejection(adapter.register(6).await);
    assert_eq!(server.hits(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_refused_fails_fast_and_opens_on_the_10th_call() {
    let addr = refused_addr().await;
    let (guard, recorder) = sber_guard(&[]);
    let adapter = SberAdapter::new(guard, &format!("http://{addr}"));
    let started = Instant::now();
    let results = calls(&adapter, 10).await;
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(PortError::Transport(_)))),
        "{results:?}"
    );
    assert_eq!(state(&adapter), State::Open);
    assert_open_rejection(adapter.register(11).await);
    assert_eq!(recorder.counts().failure, 10);
    // A refusal is immediate: ten of them take nowhere near ten connect timeouts.
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_shut_down_under_its_clients_opens_it_once_the_window_has_10_calls() {
    let (mut server, adapter, recorder) = sber_rig(&[]).await;
    let results = calls(&adapter, 5).await;
    assert!(results.iter().all(Result::is_ok));
    server.shutdown(Duration::from_secs(1)).await;
    // Calls 6 to 9: failures, but fewer than 10 outcomes so far.
    let results = calls(&adapter, 4).await;
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(PortError::Transport(_)))),
        "{results:?}"
    );
    assert_eq!(state(&adapter), State::Closed);
    assert!(adapter.register(10).await.is_err());
    assert_eq!(state(&adapter), State::Open, "5/10 on the 10th call");
    assert_open_rejection(adapter.register(11).await);
    assert_eq!(recorder.counts().success, 5);
    assert_eq!(recorder.counts().failure, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_reset_mid_body_is_a_failure_and_opens_it_on_the_10th_call() {
    let server = ResetServer::start().await;
    let (guard, recorder) = sber_guard(&[]);
    let adapter = SberAdapter::new(guard, &server.url());
    let results = calls(&adapter, 10).await;
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(PortError::Transport(_)))),
        "a truncated body is a transport error: {results:?}"
    );
    assert_eq!(state(&adapter), State::Open);
    assert_open_rejection(adapter.register(11).await);
    assert_eq!(server.hits(), 10);
    assert_eq!(recorder.counts().failure, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bulkhead_caps_requests_in_flight_at_the_server() {
    // max_connections 10: 8 permits. 40 callers at once, each answer 50 ms (not slow),
    // waiting up to 2 s for a permit: all are served, never more than 8 at a time.
    let (server, adapter, recorder) = sber_rig(&[("bulkhead_wait", "2")]).await;
    assert_eq!(adapter.system_guard().bulkhead_permits(), 8);
    server.always(Fault::Delay(Duration::from_millis(50)));
    let callers: Vec<_> = (0..40)
        .map(|i| {
            let adapter = adapter.clone();
            tokio::spawn(async move { adapter.register(i).await })
        })
        .collect();
    for caller in callers {
        assert_eq!(caller.await.unwrap().unwrap(), "ok");
    }
    let high = server.max_in_flight();
    assert!(high <= 8, "the server saw {high} requests at once");
    assert!(high >= 2, "the callers did run concurrently ({high})");
    assert_eq!(server.hits(), 40);
    assert_eq!(recorder.counts().success, 40);
    assert_eq!(adapter.system_guard().in_flight(), 0);

    // No waiting: of 20 callers started together, 8 reach the server and 12 are rejected
    // at once with `BulkheadFull`, which the breaker does not count.
    let (server, adapter, recorder) = sber_rig(&[("bulkhead_wait", "0")]).await;
    server.always(Fault::Delay(Duration::from_millis(50)));
    let results = futures_util::future::join_all((0..20).map(|i| adapter.register(i))).await;
    let full = results
        .iter()
        .filter(|r| {
            matches!(
                r.as_ref().err().and_then(PortError::cause),
                Some(Cause::BulkheadFull { permits: 8, .. })
            )
        })
        .count();
    assert_eq!((full, server.hits()), (12, 8));
    assert_eq!(server.max_in_flight(), 8);
    assert_eq!(recorder.counts().rejected_bulkhead, 12);
    assert_eq!(adapter.system_guard().breaker().snapshot().calls, 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_of_one_system_leaves_the_other_systems_latency_untouched() {
    // Sber's hung calls last 1.5 s, so they overlap every customer call below.
    let (guards, recorder) = guards(&[("total_timeout", "1.5")]);
    let sber_server = FakeUpstream::start().await;
    let customer_server = FakeUpstream::start().await;
    let sber = SberAdapter::new(guards.get("sber").unwrap(), &sber_server.url());
    let customer = CustomerAdapter::new(guards.get("customer").unwrap(), &customer_server.url());
    sber_server.always(Fault::Trickle(Duration::from_millis(50)));

    // Sber's bulkhead fills with hung calls (40 callers, 8 permits, the rest waiting).
    let hung: Vec<_> = (0..40)
        .map(|i| {
            let sber = sber.clone();
            tokio::spawn(async move { sber.register(i).await })
        })
        .collect();
    eventually(Duration::from_secs(5), || {
        sber.system_guard().in_flight() == 8
    })
    .await;
    assert_eq!(sber.system_guard().in_flight(), 8);

    // Meanwhile the customer system answers every call promptly.
    let mut slowest = Duration::ZERO;
    for i in 0..20 {
        let started = Instant::now();
        assert_eq!(customer.get(i).await.unwrap(), "ok");
        slowest = slowest.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        sber.system_guard().in_flight() > 0,
        "sber was still hung throughout"
    );
    for caller in hung {
        assert!(caller.await.unwrap().is_err());
    }

    // Not one customer call was even slow (100 ms), and its window holds only its own
    // 20 successes.
    assert!(
        slowest < Duration::from_millis(100),
        "slowest customer call {slowest:?}"
    );
    let customer_guard = customer.system_guard();
    let snapshot = customer_guard.breaker().snapshot();
    assert_eq!(
        (snapshot.state, snapshot.calls, snapshot.failures),
        (State::Closed, 20, 0)
    );
    assert_eq!(customer_guard.in_flight(), 0);
    assert!(recorder.transitions_of("customer").is_empty());
    assert_eq!(customer_server.hits(), 20);
}

/// Opens the breaker with a burst of ten 503s.
async fn open_with_a_burst(server: &FakeUpstream, adapter: &SberAdapter) {
    server.script([Fault::Status(503); 10]);
    calls(adapter, 10).await;
    assert_eq!(state(adapter), State::Open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_open_duration_exactly_3_trials_reach_the_server_then_it_closes() {
    let (server, adapter, recorder) = sber_rig(&[]).await;
    open_with_a_burst(&server, &adapter).await;
    let opened = Instant::now();
    assert_open_rejection(adapter.register(11).await);
    // Healed, answering in 30 ms (not slow), so trials are in flight together.
    server.always(Fault::Delay(Duration::from_millis(30)));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.hits();

    // Six callers at once: three trials admitted, three refused as half-open full.
    let results = futures_util::future::join_all((0..6).map(|i| adapter.register(i))).await;
    assert!(opened.elapsed() >= Duration::from_millis(250));
    assert!(
        results[..3].iter().all(|r| r.as_deref().ok() == Some("ok")),
        "{results:?}"
    );
    for result in &results[3..] {
        assert!(
            matches!(
                result.as_ref().err().and_then(PortError::cause),
                Some(Cause::HalfOpenFull { trials: 3 })
            ),
            "{result:?}"
        );
    }
    assert_eq!(
        server.hits() - before,
        3,
        "exactly cb_half_open_calls trials"
    );
    assert_eq!(state(&adapter), State::Closed);
    assert_eq!(
        recorder.transitions_of("sber"),
        vec![
            (State::Closed, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Closed),
        ]
    );
    // Closed again: calls flow.
    assert_eq!(adapter.register(99).await.unwrap(), "ok");
    assert_eq!(server.hits() - before, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_trial_opens_it_for_another_open_duration() {
    let (server, adapter, recorder) = sber_rig(&[]).await;
    open_with_a_burst(&server, &adapter).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.script([Fault::Ok, Fault::Status(503)]);
    assert!(adapter.register(1).await.is_ok(), "trial 1 succeeds");
    assert_eq!(state(&adapter), State::HalfOpen);
    assert!(matches!(
        adapter.register(2).await,
        Err(PortError::Upstream(503))
    ));
    assert_eq!(state(&adapter), State::Open, "trial 2 failed");
    match adapter.register(3).await {
        Err(PortError::Unavailable(e)) => {
            let retry = e.retry_after().expect("open: a retry-after");
            assert!(retry > Duration::from_millis(100) && retry <= Duration::from_millis(250));
        }
        other => panic!("expected an open rejection, got {other:?}"),
    }
    assert_eq!(server.hits(), 12);
    assert_eq!(
        recorder.transitions_of("sber")[1..],
        [
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Open)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flapping_health_only_ever_sends_trials_while_it_recovers() {
    // 3 failing requests, then 7 healthy, over and over (counted at the server).
    let (server, adapter, recorder) = sber_rig(&[]).await;
    server.set(Mode::Flap {
        down: 3,
        up: 7,
        status: 503,
    });
    // Requests 1–10: 3/10 opens it. Then each open period ends in one trial: requests
    // 11, 12 and 13 fail (the next down phase) and reopen it; 14, 15, 16 succeed and
    // close it. Callers keep calling every 10 ms throughout.
    let started = Instant::now();
    let mut rejected = 0;
    let mut i = 0;
    loop {
        i += 1;
        match adapter.register(i).await {
            Err(e) if e.is_rejection() => rejected += 1,
            _ => {}
        }
        let closed_again =
            recorder.transitions_of("sber").last() == Some(&(State::HalfOpen, State::Closed));
        if closed_again {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "did not recover"
        );
        if state(&adapter) != State::Closed {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    assert_eq!(
        server.hits(),
        16,
        "10 closed calls, 3 failed trials, 3 good ones"
    );
    assert!(rejected > 0);
    let (c, o, h) = (State::Closed, State::Open, State::HalfOpen);
    assert_eq!(
        recorder.transitions_of("sber"),
        vec![
            (c, o),
            (o, h),
            (h, o),
            (o, h),
            (h, o),
            (o, h),
            (h, o),
            (o, h),
            (h, c)
        ]
    );
    // Three reopenings at 250 ms each: at least a second went by.
    assert!(started.elapsed() >= Duration::from_secs(1));
}
