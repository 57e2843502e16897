//! How long an open period lasts: the upstream's retry hint (`Retry-After`,
//! `grpc-retry-pushback-ms`) capped by `cb_open_max`, the backoff of repeated openings
//! (`cb_open_backoff`) and its end on closing, and the jitter's bounds (`cb_open_jitter`,
//! seeded). Every test runs on tokio's paused clock, so the periods are exact.

use outbound_guard::Verdict;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use outbound_guard::http_status::parse_retry_after;
use outbound_guard::{
    Breaker, CallOptions, Cause, CircuitBreakerError, Guard, Observer, State, Transition,
};
use tokio::time::advance;

mod common;
use common::{system, MS, S};

/// Every transition's log line, and its open period.
#[derive(Default)]
struct Lines(Mutex<Vec<(String, Option<Duration>)>>);

impl Observer for Lines {
    fn on_transition(&self, t: &Transition<'_>) {
        let length = t.open.map(|open| open.length);
        self.0.lock().unwrap().push((t.to_string(), length));
    }
}

/// A guard whose breaker is under test, reporting to the lines returned beside it.
fn observed(extra: &str) -> (Guard, Arc<Lines>) {
    let lines = Arc::new(Lines::default());
    let guard = Guard::builder(&system(extra))
        .observer(lines.clone())
        .build();
    (guard, lines)
}

/// `n` failures, the last carrying `hint` if any.
fn fail(breaker: &Breaker, n: usize, hint: Option<Duration>) {
    for i in 0..n {
        let permit = breaker.try_acquire().expect("admitted");
        match hint {
            Some(hint) if i + 1 == n => permit.finish(Verdict::FAILURE.retry_after(Some(hint))),
            _ => permit.finish(Verdict::FAILURE),
        }
    }
}

fn refused_for(breaker: &Breaker) -> Duration {
    match *breaker.try_acquire().unwrap_err().cause() {
        Cause::Open { retry_after } => retry_after,
        other => panic!("expected open, got {other:?}"),
    }
}

/// How long the breaker stays open from now: advances in 1 ms steps up to `limit` and
/// returns when a reading first says half-open.
async fn open_for(breaker: &Breaker, limit: Duration) -> Duration {
    let start = tokio::time::Instant::now();
    assert_eq!(breaker.state(), State::Open);
    let mut step = S;
    while start.elapsed() < limit {
        advance(step).await;
        if breaker.state() != State::Open {
            // Back one second and walk in milliseconds: the exact instant.
            return start.elapsed();
        }
        if refused_for(breaker) < S {
            step = MS;
        }
    }
    panic!("still open after {limit:?}")
}

#[tokio::test(start_paused = true)]
async fn a_hint_shorter_than_cb_open_duration_changes_nothing() {
    let (guard, lines) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 10, Some(5 * S));
    assert_eq!(breaker.snapshot().open_for, Some(30 * S));
    assert_eq!(breaker.snapshot().retry_hint, None);
    assert_eq!(open_for(breaker, 200 * S).await, 30 * S);
    assert_eq!(
        lines.0.lock().unwrap()[0].0,
        "sber opened: 10 of 10 calls failed (100% ≥ 50%)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hint_longer_than_cb_open_duration_sets_the_open_period() {
    let (guard, lines) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 10, Some(120 * S));
    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.open_for, snapshot.retry_hint, snapshot.retry_after),
        (Some(120 * S), Some(120 * S), Some(120 * S))
    );
    assert_eq!(refused_for(breaker), 120 * S);
    assert_eq!(
        lines.0.lock().unwrap()[0],
        (
            "sber opened for 120 s, as its Retry-After asked: 10 of 10 calls failed (100% ≥ 50%)"
                .to_owned(),
            Some(120 * S)
        )
    );
    assert_eq!(open_for(breaker, 600 * S).await, 120 * S);
}

#[tokio::test(start_paused = true)]
async fn a_hint_over_cb_open_max_is_capped() {
    let (guard, _) = observed("cb_open_max = 300");
    let breaker = guard.breaker();
    fail(breaker, 10, Some(Duration::from_secs(u64::MAX)));
    assert_eq!(breaker.snapshot().retry_hint, Some(300 * S));
    assert_eq!(open_for(breaker, 900 * S).await, 300 * S);
}

#[tokio::test(start_paused = true)]
async fn an_http_date_hint_and_garbage() {
    let now = httpdate::parse_http_date("Fri, 04 Dec 2026 15:00:00 GMT").unwrap();
    let date = parse_retry_after(b"Fri, 04 Dec 2026 15:01:30 GMT", now);
    assert_eq!(date, Some(90 * S));
    let (guard, _) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 10, date);
    assert_eq!(open_for(breaker, 600 * S).await, 90 * S);

    // Garbage gives no hint: a plain failure, the plain 30 s.
    let garbage = parse_retry_after(b"in a minute", SystemTime::now());
    assert_eq!(garbage, None);
    let (guard, _) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 10, garbage);
    assert_eq!(open_for(breaker, 600 * S).await, 30 * S);
}

/// The guide opens a breaker when the system "clearly does not work", judged on at least
/// `cb_min_calls` outcomes, and never on one: a single 429 saying "stop for 60 s" is one
/// failure in the window (it may be one client's quota), not an outage. But once the
/// window does open the breaker, the upstream's hint decides how long it stays open: the
/// breaker's purpose is to give the system time to recover without extra load, and the
/// system said how much time.
#[tokio::test(start_paused = true)]
async fn a_hint_alone_does_not_open_a_closed_breaker_but_lengthens_the_opening_it_joins() {
    let (guard, lines) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 1, Some(60 * S));
    assert_eq!(
        breaker.state(),
        State::Closed,
        "one hinted failure of one call"
    );
    let permit = breaker.try_acquire().expect("calls still flow");
    permit.finish(Verdict::SUCCESS);
    assert!(lines.0.lock().unwrap().is_empty());

    // The other side: the window opens it 10 s later, and the hint kept from that first
    // failure (60 s from when it came) sets the opening's length.
    advance(10 * S).await;
    let (guard, _) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 1, Some(60 * S));
    advance(10 * S).await;
    fail(breaker, 9, None);
    assert_eq!(breaker.snapshot().retry_hint, Some(50 * S));
    assert_eq!(open_for(breaker, 600 * S).await, 50 * S);
}

/// A hint that arrives while the breaker is already open (a call admitted before it
/// opened) still lengthens the running open period, capped from its start.
#[tokio::test(start_paused = true)]
async fn a_hint_landing_on_a_running_open_period_lengthens_it() {
    let (guard, _) = observed("cb_open_max = 100");
    let breaker = guard.breaker();
    let late = breaker.try_acquire().unwrap();
    let later = breaker.try_acquire().unwrap();
    fail(breaker, 10, None);
    advance(5 * S).await;
    late.finish(Verdict::FAILURE.retry_after(Some(60 * S)));
    assert_eq!(refused_for(breaker), 60 * S);
    assert_eq!(breaker.snapshot().open_for, Some(65 * S));
    assert_eq!(breaker.snapshot().calls, 10, "counted nothing");
    later.finish(Verdict::FAILURE.retry_after(Some(3600 * S)));
    assert_eq!(
        refused_for(breaker),
        95 * S,
        "at most cb_open_max from its start"
    );
}

/// A trial that fails with a hint re-opens for at least the hint.
#[tokio::test(start_paused = true)]
async fn a_trial_failing_with_a_hint_reopens_for_the_hint() {
    let (guard, lines) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 10, None);
    advance(30 * S).await;
    breaker
        .try_acquire()
        .unwrap()
        .finish(Verdict::FAILURE.retry_after(Some(120 * S)));
    assert_eq!(
        lines.0.lock().unwrap().last().unwrap().0,
        "sber opened again for 120 s, as its Retry-After asked: trial 1 of 3 failed"
    );
    assert_eq!(open_for(breaker, 600 * S).await, 120 * S);
}

/// `cb_open_backoff = 2`: 30, 60, 120, 240, then the 300 s cap; closing goes back to 30.
#[tokio::test(start_paused = true)]
async fn backoff_doubles_each_reopening_up_to_the_cap_and_ends_on_closing() {
    let (guard, lines) = observed("cb_open_backoff = 2.0\ncb_open_max = 300");
    let breaker = guard.breaker();
    fail(breaker, 10, None);
    let mut periods = Vec::new();
    for _ in 0..6 {
        periods.push(open_for(breaker, 600 * S).await);
        breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    }
    assert_eq!(
        periods,
        [30 * S, 60 * S, 120 * S, 240 * S, 300 * S, 300 * S]
    );
    assert!(lines
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|(line, _)| line == "sber opened again for 1m 0s (backed off): trial 1 of 3 failed"));
    // Three trials succeed: closed, and the next opening is 30 s again.
    open_for(breaker, 600 * S).await;
    for _ in 0..3 {
        breaker.try_acquire().unwrap().finish(Verdict::SUCCESS);
    }
    assert_eq!(breaker.state(), State::Closed);
    fail(breaker, 10, None);
    assert_eq!(open_for(breaker, 600 * S).await, 30 * S);
    // A reset ends the backoff too.
    breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    assert_eq!(breaker.snapshot().open_for, Some(60 * S));
    assert!(breaker.act(outbound_guard::ManualAction::Reset));
    fail(breaker, 10, None);
    assert_eq!(breaker.snapshot().open_for, Some(30 * S));
}

/// The default 1.0 is the guide's fixed 30 s, every time.
#[tokio::test(start_paused = true)]
async fn without_backoff_every_reopening_is_30_s() {
    let (guard, _) = observed("");
    let breaker = guard.breaker();
    fail(breaker, 10, None);
    for _ in 0..5 {
        assert_eq!(open_for(breaker, 600 * S).await, 30 * S);
        breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    }
}

/// `cb_open_jitter = 0.1`: every open period is within [30 s, 33 s); a seed makes them
/// exact, two seeds draw apart.
#[tokio::test(start_paused = true)]
async fn jitter_stays_in_its_bounds_and_a_seed_repeats_it() {
    let periods = |seed: u64| {
        let (guard, _) = observed("cb_open_jitter = 0.1");
        let breaker = guard.breaker();
        breaker.seed_jitter(seed);
        fail(breaker, 10, None);
        let mut periods = Vec::new();
        for _ in 0..50 {
            let open = breaker.snapshot().open_for.unwrap();
            periods.push(open);
            // Re-open without waiting: force open and reset, then ten failures.
            breaker.act(outbound_guard::ManualAction::Reset);
            fail(breaker, 10, None);
        }
        periods
    };
    let first = periods(7);
    assert!(
        first.iter().all(|p| *p >= 30 * S && *p < 33 * S),
        "{first:?}"
    );
    assert_eq!(first, periods(7), "the same seed, the same periods");
    assert_ne!(first, periods(8));
    let spread = first
        .iter()
        .max()
        .unwrap()
        .saturating_sub(*first.iter().min().unwrap());
    assert!(
        spread > S,
        "spread over the 3 s the jitter allows: {spread:?}"
    );
    // Capped by cb_open_max even with jitter.
    let (guard, _) = observed("cb_open_jitter = 0.9\ncb_open_max = 31");
    let breaker = guard.breaker();
    for seed in 0..20 {
        breaker.seed_jitter(seed);
        fail(breaker, 10, None);
        assert!(breaker.snapshot().open_for.unwrap() <= 31 * S);
        breaker.act(outbound_guard::ManualAction::Reset);
    }
}

#[derive(Debug, PartialEq)]
enum PortError {
    Busy(Option<Duration>),
    Declined,
}

fn options() -> CallOptions<PortError> {
    CallOptions::new()
        .failure_if(|e| *e != PortError::Declined)
        .retry_after(|e| match e {
            PortError::Busy(hint) => *hint,
            PortError::Declined => Some(3600 * S),
        })
}

/// A port error holding the upstream's hint, read by `CallOptions::retry_after`; a hint
/// on an answer that does not count (a declined payment) is ignored.
#[tokio::test(start_paused = true)]
async fn a_port_error_carries_its_hint_through_call_options() {
    let guard = Guard::new(&system(""));
    for _ in 0..5 {
        let declined = guard
            .call_judged(options(), async { Err::<(), _>(PortError::Declined) })
            .await;
        assert_eq!(declined, Ok(Err(PortError::Declined)));
    }
    // 5 of 10 failed: the 10th call opens it.
    for _ in 0..5 {
        let busy = guard
            .call_judged(options(), async {
                Err::<(), _>(PortError::Busy(Some(90 * S)))
            })
            .await;
        assert_eq!(busy, Ok(Err(PortError::Busy(Some(90 * S)))));
    }
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(guard.breaker().snapshot().retry_hint, Some(90 * S));
    let refused: Result<Result<(), PortError>, CircuitBreakerError> =
        guard.call_judged(options(), async { Ok(()) }).await;
    assert_eq!(
        *refused.unwrap_err().cause(),
        Cause::Open {
            retry_after: 90 * S
        }
    );
}

/// A client integration's running call, finished with the hint its answer carried.
#[tokio::test(start_paused = true)]
async fn a_running_call_finishes_with_a_hint() {
    let guard = Guard::new(&system(""));
    for i in 0..10 {
        let running = common::running_call(&guard).await.unwrap();
        let hint = (i == 9).then_some(45 * S);
        let _ = running.finish(Verdict::FAILURE.retry_after(hint));
    }
    assert_eq!(guard.breaker().snapshot().open_for, Some(45 * S));
    // A hint on a success is ignored.
    let guard = Guard::new(&system(""));
    let running = common::running_call(&guard).await.unwrap();
    let _ = running.finish(Verdict::SUCCESS.retry_after(Some(45 * S)));
    assert_eq!(guard.breaker().snapshot().failures, 0);
}
