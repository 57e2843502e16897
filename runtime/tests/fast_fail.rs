//! Fail fast under a hang with the guide's own defaults (bulkhead of 8 permits,
//! `cb_min_calls` 10, slow threshold 15 s, total timeout 35 s, `bulkhead_wait` 2 s), one
//! caller every 100 ms, through the public API, on paused time:
//!
//! - a hanging upstream: the breaker opens near the slow threshold, the first zero-wait
//!   rejection comes by `cb_slow_threshold + bulkhead_wait + 1 s`, and at most
//!   `permits + cb_min_calls` calls ever reach the upstream;
//! - a bulkhead saturated by fast calls (plain load): waiters are turned away, the
//!   breaker never opens;
//! - an idle breaker reports the due open → half-open transition when read, and an open
//!   breaker shows the figures that tripped it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{
    Cause, Guard, HealthStatus, Observer, Reason, Settings, State, Transition, Trials,
};
use tokio::time::{sleep, Instant};

mod common;
use common::{MS, S};

#[derive(Default)]
struct Transitions(Mutex<Vec<(State, State, Reason, Instant)>>);

impl Observer for Transitions {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.from, t.to, t.reason, t.at));
    }
}

/// A guard with every setting at the guide's default.
fn guide_guard(extra: &str) -> (Guard, Arc<Transitions>) {
    let settings = Settings::parse(&format!("[systems.sber]\n{extra}"), "inline").unwrap();
    let transitions = Arc::new(Transitions::default());
    let guard = Guard::builder(settings.system("sber").unwrap())
        .observer(transitions.clone())
        .build();
    (guard, transitions)
}

/// One caller's call: when it started, how long it took, how it ended.
#[derive(Debug, Clone, Copy)]
struct Seen {
    started: Duration,
    took: Duration,
    /// `None`: admitted (whatever the call returned); otherwise why it was refused.
    refused: Option<Cause>,
}

/// One caller every `every` for `run`, each running `upstream` under the guard.
async fn drive<F, Fut>(guard: &Guard, every: Duration, run: Duration, upstream: F) -> Vec<Seen>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), ()>> + Send + 'static,
{
    let upstream = Arc::new(upstream);
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    while t0.elapsed() < run {
        let (guard, upstream) = (guard.clone(), upstream.clone());
        tasks.push(tokio::spawn(async move {
            let start = Instant::now();
            let result = guard.call(upstream()).await;
            Seen {
                started: start - t0,
                took: start.elapsed(),
                refused: result
                    .err()
                    .map(|e| *e.cause())
                    .filter(|c| !matches!(c, Cause::Timeout { .. } | Cause::Slow { .. })),
            }
        }));
        sleep(every).await;
    }
    let mut seen = Vec::new();
    for task in tasks {
        seen.push(task.await.unwrap());
    }
    seen
}

fn first_zero_wait_rejection(seen: &[Seen]) -> Option<Duration> {
    seen.iter()
        .filter(|s| s.refused.is_some() && s.took.is_zero())
        .map(|s| s.started)
        .min()
}

#[tokio::test(start_paused = true)]
async fn a_hang_under_the_guides_defaults_fails_fast_near_the_slow_threshold() {
    let (guard, transitions) = guide_guard("");
    let settings = guard.settings().clone();
    assert_eq!(guard.bulkhead_permits(), 8);
    assert_eq!(settings.cb_min_calls(), 10);
    assert_eq!(settings.cb_slow_threshold(), 15 * S);
    assert_eq!(settings.total_timeout(), 35 * S);
    assert_eq!(settings.bulkhead_wait(), 2 * S);

    let reached = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let seen = drive(&guard, 100 * MS, 90 * S, {
        let reached = reached.clone();
        move || {
            let reached = reached.clone();
            async move {
                reached.fetch_add(1, Ordering::SeqCst);
                std::future::pending().await
            }
        }
    })
    .await;

    let bound = settings.cb_slow_threshold() + settings.bulkhead_wait() + S;
    let first = first_zero_wait_rejection(&seen).expect("callers are turned away at once");
    assert!(
        first <= bound,
        "first zero-wait rejection at {first:?}, want ≤ {bound:?}"
    );
    let opened = transitions.0.lock().unwrap()[0];
    eprintln!(
        "opened at {:?}, first zero-wait rejection at {first:?}",
        opened.3 - t0
    );
    assert_eq!((opened.0, opened.1), (State::Closed, State::Open));
    let reached = reached.load(Ordering::SeqCst);
    let most = guard.bulkhead_permits() + settings.cb_min_calls() as usize;
    eprintln!("{reached} calls reached the upstream");
    assert!(
        reached <= most,
        "{reached} calls reached the upstream, want ≤ {most}"
    );
    // Once open, every new caller is turned away at once, not after a bulkhead wait.
    let open_from = first + 2 * S;
    let waited_while_open = seen
        .iter()
        .filter(|s| s.started > open_from && s.started < 45 * S && !s.took.is_zero())
        .count();
    assert_eq!(
        waited_while_open, 0,
        "callers queued behind an open breaker"
    );
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_full_of_fast_calls_is_load_and_never_opens_the_breaker() {
    let (guard, transitions) = guide_guard("");
    // 8 permits, each call 1 s: 8 calls a second; 20 callers a second arrive.
    let seen = drive(&guard, 50 * MS, 60 * S, || async {
        sleep(S).await;
        Ok(())
    })
    .await;
    let full = seen
        .iter()
        .filter(|s| matches!(s.refused, Some(Cause::BulkheadFull { .. })))
        .count();
    assert!(full > 100, "the bulkhead was saturated: {full} turned away");
    assert!(
        seen.iter()
            .all(|s| matches!(s.refused, None | Some(Cause::BulkheadFull { .. }))),
        "only the bulkhead refused calls"
    );
    assert!(transitions.0.lock().unwrap().is_empty());
    assert_eq!(guard.breaker().state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_full_of_slow_but_finishing_calls_and_fast_calls_is_not_a_hang() {
    // 7 of 8 permits held by slow calls that finish after 20 s, one permit cycling fast
    // calls: the bulkhead is full, but not every permit is held by a slow call.
    let (guard, transitions) = guide_guard("cb_min_calls = 50\ncb_window_size = 50");
    let slow: Vec<_> = (0..7)
        .map(|_| {
            let guard = guard.clone();
            tokio::spawn(async move {
                guard
                    .call(async {
                        sleep(20 * S).await;
                        Ok::<_, ()>(())
                    })
                    .await
            })
        })
        .collect();
    sleep(MS).await;
    let seen = drive(&guard, 50 * MS, 19 * S, || async {
        sleep(S).await;
        Ok(())
    })
    .await;
    for call in slow {
        assert_eq!(call.await.unwrap(), Ok(Ok(())));
    }
    assert!(seen
        .iter()
        .any(|s| matches!(s.refused, Some(Cause::BulkheadFull { .. }))));
    assert!(transitions.0.lock().unwrap().is_empty());
    // Only the seven slow calls are in the window: waiters added nothing.
    assert_eq!(guard.breaker().snapshot().failures, 7);
}

/// A guard that opens on 3 failures of 10 (30%), open for 30 s.
fn critical_guard() -> (Guard, Arc<Transitions>) {
    guide_guard("cb_failure_rate = 0.3")
}

async fn trip(guard: &Guard) {
    for i in 0..10 {
        let failed = i % 3 == 0 && i < 9; // failures at 0, 3, 6: 3 of 10
        let _ = guard
            .call(async move {
                if failed {
                    Err(())
                } else {
                    Ok(())
                }
            })
            .await;
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_shows_the_figures_that_tripped_it() {
    let (guard, _) = critical_guard();
    trip(&guard).await;
    assert_eq!(guard.breaker().state(), State::Open);
    sleep(10 * S).await;
    let snap = guard.breaker().snapshot();
    assert_eq!((snap.failures, snap.calls), (3, 10));
    assert!((snap.failure_rate - 0.3).abs() < 1e-9);
    assert!(matches!(
        snap.opened_by,
        Some(Reason::FailureRate {
            failures: 3,
            calls: 10,
            ..
        })
    ));
    let health = guard.health();
    assert_eq!(health.snapshot.opened_by, snap.opened_by);
    assert_eq!((health.snapshot.failures, health.snapshot.calls), (3, 10));
    assert!((health.snapshot.failure_rate - 0.3).abs() < 1e-9);
    assert!((guard.breaker().peek().failure_rate - 0.3).abs() < 1e-9);
}

#[tokio::test(start_paused = true)]
async fn an_idle_breaker_reports_the_due_trial_instead_of_open_with_nothing_left() {
    let (guard, transitions) = critical_guard();
    trip(&guard).await;
    let opened_at = Instant::now();
    assert_eq!(guard.breaker().state(), State::Open);
    sleep(45 * S).await; // nobody calls
    assert_eq!(guard.breaker().state(), State::HalfOpen);
    let snap = guard.breaker().snapshot();
    assert_eq!(snap.state, State::HalfOpen);
    assert_eq!(snap.retry_after, None);
    assert_eq!(snap.opened_by, None);
    assert_eq!(
        (snap.failures, snap.calls),
        (0, 0),
        "half-open: no trials yet"
    );
    assert_eq!(snap.since, opened_at + 30 * S, "half-open when it fell due");
    assert_eq!(guard.health().status, HealthStatus::Degraded);
    let last = *transitions.0.lock().unwrap().last().unwrap();
    assert_eq!((last.0, last.1), (State::Open, State::HalfOpen));
    assert_eq!(last.3, opened_at + 30 * S);
    // The trials still decide: three successes close it.
    for _ in 0..3 {
        assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
    }
    assert_eq!(guard.breaker().state(), State::Closed);
}

/// Spawns `n` calls that hang until the total timeout.
fn hang(guard: &Guard, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n)
        .map(|_| {
            let guard = guard.clone();
            tokio::spawn(async move {
                let _ = guard.call(std::future::pending::<Result<(), ()>>()).await;
            })
        })
        .collect()
}

async fn wait_once(guard: &Guard) -> Option<Cause> {
    guard
        .call(async { Ok::<_, ()>(()) })
        .await
        .err()
        .map(|e| *e.cause())
}

#[tokio::test(start_paused = true)]
async fn a_waiter_counts_only_in_the_closed_state_its_wait_began_in() {
    // Calls hang until 60 s: every permit slow-held from 15 s to 60 s.
    let (guard, _) = guide_guard("cb_min_calls = 50\ntotal_timeout = 60");
    let hung = hang(&guard, 8);
    sleep(16 * S).await;
    assert_eq!(guard.health().slow_in_flight, 8);
    assert_eq!(guard.breaker().snapshot().failures, 8);
    // An operator forces the breaker open and resets it while a caller waits (a reset
    // alone of a closed breaker is a no-op that keeps its window): its wait belongs to
    // the earlier closed state and does not land in the new one.
    let waiter = tokio::spawn({
        let guard = guard.clone();
        async move { wait_once(&guard).await }
    });
    sleep(S).await;
    assert!(guard.breaker().act(outbound_guard::ManualAction::ForceOpen));
    assert!(guard.breaker().act(outbound_guard::ManualAction::Reset));
    assert!(matches!(
        waiter.await.unwrap(),
        Some(Cause::BulkheadFull { .. })
    ));
    assert_eq!(
        guard.breaker().snapshot().calls,
        0,
        "stale wait not counted"
    );
    // A wait that begins and ends in the new closed state counts.
    assert!(matches!(
        wait_once(&guard).await,
        Some(Cause::BulkheadFull { .. })
    ));
    let snap = guard.breaker().snapshot();
    assert_eq!((snap.failures, snap.calls), (1, 1));
    // Every caller kept out by the hang counts, not one per slow call: 20 more waits of
    // 2 s end by 59 s, while the hung calls still hold every permit.
    for _ in 0..20 {
        let _ = wait_once(&guard).await;
    }
    assert_eq!(
        guard.breaker().snapshot().failures,
        21,
        "every caller the hang kept out counts"
    );
    for call in hung {
        call.await.unwrap();
    }
    assert_eq!(guard.health().slow_in_flight, 0);
    // The hang is over: a full bulkhead of fresh calls is load again.
    assert!(wait_once(&guard).await.is_none());
}

#[tokio::test(start_paused = true)]
async fn waiters_turned_away_while_half_open_leave_the_decision_to_the_trials() {
    // Open for 10 s only: it is due for trials while the hung calls still hold every
    // permit (they time out at 35 s).
    let (guard, transitions) = guide_guard("cb_open_duration = 10\ncb_min_calls = 8");
    let hung = hang(&guard, 8);
    sleep(16 * S).await;
    assert_eq!(guard.breaker().state(), State::Open);
    sleep(10 * S).await;
    // Due: the caller waits for a permit (no trial slot is taken without one)...
    let refused = wait_once(&guard).await;
    assert!(matches!(refused, Some(Cause::BulkheadFull { .. })));
    // ...and its bulkhead rejection is not a trial's failure.
    let snap = guard.breaker().snapshot();
    assert_eq!(snap.state, State::HalfOpen);
    assert_eq!(
        snap.trials,
        Trials {
            admitted: 0,
            succeeded: 0
        }
    );
    assert_eq!(
        transitions.0.lock().unwrap().len(),
        2,
        "closed → open → half-open"
    );
    for call in hung {
        call.await.unwrap();
    }
    for _ in 0..3 {
        assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
    }
    assert_eq!(guard.breaker().state(), State::Closed);
}

/// `n` successful calls, one every 100 ms: a window full of successes, as in a service
/// that was healthy until now.
async fn warm_up(guard: &Guard, n: usize) {
    for _ in 0..n {
        assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
        sleep(100 * MS).await;
    }
    let snap = guard.breaker().snapshot();
    assert_eq!(
        (snap.failures, snap.calls),
        (0, 50),
        "a full window of successes"
    );
}

/// What a warm service saw of an upstream turning bad: counted from the end of the
/// warm-up, when the breaker opened and the first caller was turned away at once, and
/// how many calls reached the upstream by then.
#[derive(Debug)]
struct Turned {
    opened: Duration,
    first_zero_wait: Duration,
    reached: usize,
}

/// After 60 successes, one caller every 100 ms for 60 s, each waiting on `upstream`
/// (`None`: it hangs; `Some(d)`: it answers after `d`).
async fn after_warm_up(
    guard: &Guard,
    transitions: &Transitions,
    upstream: Option<Duration>,
) -> Turned {
    warm_up(guard, 60).await;
    let reached = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let seen = drive(guard, 100 * MS, 60 * S, {
        let reached = reached.clone();
        move || {
            let reached = reached.clone();
            async move {
                reached.fetch_add(1, Ordering::SeqCst);
                match upstream {
                    Some(answer) => sleep(answer).await,
                    None => std::future::pending().await,
                }
                Ok(())
            }
        }
    })
    .await;
    let first_zero_wait =
        first_zero_wait_rejection(&seen).expect("callers are turned away at once");
    let (from, to, _, at) = transitions.0.lock().unwrap()[0];
    assert_eq!((from, to), (State::Closed, State::Open));
    let opened = at - t0;
    // Calls that reached the upstream before the first zero-wait rejection.
    let reached_by_then = seen
        .iter()
        .filter(|s| s.refused.is_none() && s.started <= first_zero_wait)
        .count();
    assert!(reached_by_then <= reached.load(Ordering::SeqCst));
    Turned {
        opened,
        first_zero_wait,
        reached: reached_by_then,
    }
}

#[tokio::test(start_paused = true)]
async fn a_hang_behind_a_warm_window_fails_fast_under_the_guides_defaults() {
    let (guard, transitions) = guide_guard("");
    let settings = guard.settings().clone();
    let turned = after_warm_up(&guard, &transitions, None).await;
    eprintln!("hang, warm: {turned:?}");
    let bound = settings.cb_slow_threshold() + 2 * settings.bulkhead_wait() + S;
    assert!(
        turned.first_zero_wait <= bound,
        "first zero-wait rejection {:?} after the hang, want ≤ {bound:?}",
        turned.first_zero_wait
    );
    assert!(
        turned.opened >= settings.cb_slow_threshold(),
        "nothing opens it before a call is slow"
    );
    assert_eq!(
        turned.reached,
        guard.bulkhead_permits(),
        "only the 8 calls that hung reached it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_upstream_behind_a_warm_window_fails_fast_under_the_guides_defaults() {
    // Answers after 20 s: past the 15 s slow threshold, inside the 35 s total timeout.
    let (guard, transitions) = guide_guard("");
    let settings = guard.settings().clone();
    let turned = after_warm_up(&guard, &transitions, Some(20 * S)).await;
    eprintln!("slow, warm: {turned:?}");
    let bound = settings.cb_slow_threshold() + 2 * settings.bulkhead_wait() + S;
    assert!(
        turned.first_zero_wait <= bound,
        "first zero-wait rejection {:?} after the slowdown, want ≤ {bound:?}",
        turned.first_zero_wait
    );
}

#[tokio::test(start_paused = true)]
async fn one_hung_call_among_healthy_ones_never_opens_the_breaker() {
    let (guard, transitions) = guide_guard("");
    let hung = hang(&guard, 1);
    sleep(MS).await;
    // 7 permits left for calls of 1 s, 20 callers a second: the bulkhead is full, one
    // permit held by a slow call, for the whole hang.
    let seen = drive(&guard, 50 * MS, 40 * S, || async {
        sleep(S).await;
        Ok(())
    })
    .await;
    assert!(seen
        .iter()
        .any(|s| matches!(s.refused, Some(Cause::BulkheadFull { .. }))));
    for call in hung {
        call.await.unwrap();
    }
    assert!(transitions.0.lock().unwrap().is_empty());
    assert_eq!(guard.breaker().state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_of_one_permit_does_not_open_on_its_first_slow_call() {
    // One permit; its call answers after 16 s, 1 s past the slow threshold (less than
    // `bulkhead_wait` later); a caller every 100 ms. Cold window: 10 outcomes decide.
    let (guard, transitions) = guide_guard("max_connections = 1\ncb_window_size = 500");
    assert_eq!(guard.bulkhead_permits(), 1);
    let slow = tokio::spawn({
        let guard = guard.clone();
        async move {
            guard
                .call(async {
                    sleep(16 * S).await;
                    Ok::<_, ()>(())
                })
                .await
        }
    });
    sleep(MS).await;
    let seen = drive(&guard, 100 * MS, 20 * S, || async { Ok(()) }).await;
    assert_eq!(slow.await.unwrap(), Ok(Ok(())));
    assert!(seen
        .iter()
        .any(|s| matches!(s.refused, Some(Cause::BulkheadFull { .. }))));
    assert!(transitions.0.lock().unwrap().is_empty());
    let snap = guard.breaker().snapshot();
    assert_eq!(snap.failures, 1, "the slow call alone: {snap:?}");
}
