//! The bulkhead on its own: never more than its permits at once under many concurrent
//! callers, waiters get permits as they free up, waiting is bounded by `bulkhead_wait`
//! (then `Cause::BulkheadFull`), and cancelled waiters hold nothing and block nobody,
//! even one cancelled right after a release woke it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use outbound_guard::{Cause, Guard};
use tokio::time::{sleep, Instant};

mod common;
use common::{MS, S};

fn guard(extra: &str) -> Guard {
    common::guard(&format!("read_timeout = 100\ntotal_timeout = 120\n{extra}"))
}

/// Counts the calls running now and the most ever running at once.
#[derive(Default)]
struct HighWater {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl HighWater {
    async fn run(&self, work: impl std::future::Future<Output = ()>) -> Result<(), ()> {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        work.await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn many_concurrent_callers_never_exceed_the_permits() {
    let guard = guard("max_connections = 5\nbulkhead_wait = \"1000s\"");
    assert_eq!(guard.bulkhead_permits(), 4);
    let high = Arc::new(HighWater::default());
    let tasks: Vec<_> = (0..64u64)
        .map(|i| {
            let (guard, high) = (guard.clone(), high.clone());
            tokio::spawn(async move {
                guard
                    .call(high.run(sleep(Duration::from_millis(10 + i % 7 * 13))))
                    .await
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), Ok(Ok(())));
    }
    assert_eq!(high.max.load(Ordering::SeqCst), 4, "full, never over");
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_callers_on_many_threads_never_exceed_the_permits() {
    let guard = guard("max_connections = 4\nbulkhead_wait = 60");
    assert_eq!(guard.bulkhead_permits(), 3);
    let high = Arc::new(HighWater::default());
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let (guard, high) = (guard.clone(), high.clone());
            tokio::spawn(async move {
                for _ in 0..200 {
                    let work = async {
                        tokio::task::yield_now().await;
                        std::hint::spin_loop();
                    };
                    assert_eq!(guard.call(high.run(work)).await, Ok(Ok(())));
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let max = high.max.load(Ordering::SeqCst);
    assert!((1..=3).contains(&max), "high-water mark {max} of 3 permits");
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn waiters_get_permits_as_they_free_up() {
    let guard = guard("max_connections = 2\nbulkhead_wait = 10");
    assert_eq!(guard.bulkhead_permits(), 1);
    let t0 = Instant::now();
    // Each call holds the one permit for 1 s; they queue and each starts the instant the
    // previous one ends.
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let guard = guard.clone();
            tokio::spawn(async move {
                guard
                    .call(async {
                        let started = Instant::now();
                        sleep(S).await;
                        Ok::<_, ()>(started)
                    })
                    .await
            })
        })
        .collect();
    let mut starts = Vec::new();
    for task in tasks {
        starts.push(task.await.unwrap().unwrap().unwrap() - t0);
    }
    starts.sort();
    assert_eq!(starts, [Duration::ZERO, S, 2 * S, 3 * S]);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn waiting_is_bounded_by_bulkhead_wait_then_bulkhead_full() {
    let guard = guard("max_connections = 2\nbulkhead_wait = 2");
    let held = common::hold(&guard).await.unwrap();
    let start = Instant::now();
    let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
    assert_eq!(start.elapsed(), 2 * S);
    assert_eq!(
        *err.cause(),
        Cause::BulkheadFull {
            permits: 1,
            waited: 2 * S
        }
    );
    assert_eq!(guard.in_flight(), 1);
    // A call held by the caller waits the same.
    let start = Instant::now();
    assert!(common::hold(&guard).await.is_err());
    assert_eq!(start.elapsed(), 2 * S);
    drop(held);
    assert_eq!(guard.in_flight(), 0);
    // Freed: no waiting at all.
    let start = Instant::now();
    assert_eq!(guard.call(async { Ok::<_, ()>(1) }).await, Ok(Ok(1)));
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn cancelled_waiters_hold_nothing_and_block_nobody() {
    let guard = guard("max_connections = 2\nbulkhead_wait = 10");
    let held = common::hold(&guard).await.unwrap();
    let waiter = |guard: &Guard| {
        let guard = guard.clone();
        tokio::spawn(async move { guard.call(async { Ok::<_, ()>(()) }).await })
    };
    let waiters: Vec<_> = (0..6).map(|_| waiter(&guard)).collect();
    sleep(MS).await;
    // Every other waiter cancelled while waiting, the first ones included.
    for w in waiters.iter().step_by(2) {
        w.abort();
    }
    sleep(MS).await;
    assert_eq!(guard.in_flight(), 1);
    drop(held);
    for (i, w) in waiters.into_iter().enumerate() {
        match w.await {
            Ok(answer) => {
                assert!(i % 2 == 1, "waiter {i} was aborted");
                assert_eq!(answer, Ok(Ok(())));
            }
            Err(e) => assert!(i % 2 == 0 && e.is_cancelled()),
        }
    }
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(Instant::now().elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_cancelled_right_after_its_wake_up_passes_it_on() {
    let guard = guard("max_connections = 2\nbulkhead_wait = 10");
    let held = common::hold(&guard).await.unwrap();
    let spawn = |guard: &Guard| {
        let guard = guard.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            let answer = guard.call(async { Ok::<_, ()>(()) }).await;
            (answer, start.elapsed())
        })
    };
    let first = spawn(&guard);
    sleep(MS).await;
    let second = spawn(&guard);
    sleep(S).await;
    // The release wakes the first waiter (the oldest); it is cancelled before it runs.
    drop(held);
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    let (answer, waited) = second.await.unwrap();
    assert_eq!(answer, Ok(Ok(())));
    assert_eq!(waited, S, "got the permit the moment it was freed");
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_that_timed_out_leaves_nothing_behind() {
    let guard = guard("max_connections = 2\nbulkhead_wait = 2");
    let held = common::hold(&guard).await.unwrap();
    let impatient = {
        let guard = guard.clone();
        tokio::spawn(async move { guard.call(async { Ok::<_, ()>(()) }).await })
    };
    sleep(MS).await;
    // A later waiter, still waiting when the first times out at 2 s.
    let later = {
        let guard = guard.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            (guard.call(async { Ok::<_, ()>(()) }).await, start.elapsed())
        })
    };
    sleep(S).await;
    let impatient = impatient.await.unwrap().unwrap_err();
    assert!(matches!(impatient.cause(), Cause::BulkheadFull { .. }));
    assert_eq!(guard.in_flight(), 1);
    drop(held);
    let (answer, waited) = later.await.unwrap();
    assert_eq!(answer, Ok(Ok(())));
    assert_eq!(waited, 2 * S - MS, "got the permit as it was freed, at 2 s");
    assert_eq!(guard.in_flight(), 0);
}

/// How callers fared in a saturated loop: calls refused, and the longest any caller
/// waited for a permit.
#[derive(Debug, Default)]
struct Fared {
    calls: usize,
    rejected: usize,
    longest: Duration,
}

/// One caller's attempt: `Some(waited)` if it got a permit, `None` if refused.
type Attempt = std::pin::Pin<Box<dyn std::future::Future<Output = Option<Duration>> + Send>>;

/// `callers` identical callers, each making `rounds` attempts back to back.
async fn saturate(
    callers: usize,
    rounds: usize,
    attempt: Arc<dyn Fn() -> Attempt + Send + Sync>,
) -> Fared {
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let attempt = attempt.clone();
            tokio::spawn(async move {
                let mut fared = Fared::default();
                for _ in 0..rounds {
                    fared.calls += 1;
                    match attempt().await {
                        Some(waited) => fared.longest = fared.longest.max(waited),
                        None => fared.rejected += 1,
                    }
                }
                fared
            })
        })
        .collect();
    let mut total = Fared::default();
    for task in tasks {
        let fared = task.await.unwrap();
        total.calls += fared.calls;
        total.rejected += fared.rejected;
        total.longest = total.longest.max(fared.longest);
    }
    total
}

#[tokio::test(start_paused = true)]
async fn a_saturated_bulkhead_is_as_fair_as_tokios_semaphore() {
    // 16 identical callers, 1 ms calls, 2 permits, 2 s of patience.
    let (callers, rounds, wait) = (16, 250, 2 * S);
    let guard = guard("max_connections = 3\nbulkhead_wait = 2");
    assert_eq!(guard.bulkhead_permits(), 2);
    let ours = saturate(
        callers,
        rounds,
        Arc::new(move || -> Attempt {
            let guard = guard.clone();
            Box::pin(async move {
                let asked = Instant::now();
                let mut waited = None;
                let answer = guard
                    .call(async {
                        waited = Some(asked.elapsed());
                        sleep(MS).await;
                        Ok::<_, ()>(())
                    })
                    .await;
                answer.ok().and(waited)
            })
        }),
    )
    .await;
    let semaphore = Arc::new(tokio::sync::Semaphore::new(2));
    let theirs = saturate(
        callers,
        rounds,
        Arc::new(move || -> Attempt {
            let semaphore = semaphore.clone();
            Box::pin(async move {
                let asked = Instant::now();
                let permit = match semaphore.clone().try_acquire_owned() {
                    Ok(permit) => permit,
                    Err(_) => tokio::time::timeout_at(asked + wait, semaphore.acquire_owned())
                        .await
                        .ok()?
                        .ok()?,
                };
                let waited = asked.elapsed();
                sleep(MS).await;
                drop(permit);
                Some(waited)
            })
        }),
    )
    .await;
    assert_eq!((ours.calls, theirs.calls), (4000, 4000));
    assert!(
        ours.rejected <= theirs.rejected && ours.longest <= theirs.longest + MS,
        "ours {ours:?}, tokio's semaphore {theirs:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_waiter_gets_a_permit_released_during_its_wait() {
    let guard = guard("max_connections = 2\nbulkhead_wait = 1");
    assert_eq!(guard.bulkhead_permits(), 1);
    let mut held = common::hold(&guard).await.ok();
    let waiter = {
        let guard = guard.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            let got = common::hold(&guard).await.is_ok();
            (got, start.elapsed())
        })
    };
    sleep(MS).await;
    // The holder releases its permit 100 times within the waiter's 1 s and each time
    // asks for it again at once, without waiting.
    let mut releases = 0;
    while held.is_some() && releases < 100 {
        sleep(9 * MS).await;
        drop(held.take());
        releases += 1;
        held = tokio::time::timeout(Duration::ZERO, common::hold(&guard))
            .await
            .ok()
            .and_then(Result::ok);
    }
    let (got, waited_for) = waiter.await.unwrap();
    assert!(
        got,
        "waited {waited_for:?} through {releases} releases, got nothing"
    );
    assert_eq!(
        waited_for,
        10 * MS,
        "got the first permit released, at 1 + 9 ms"
    );
    drop(held);
    assert_eq!(guard.in_flight(), 0);
}

/// Records, when dropped, how many bulkhead permits were held at that moment.
struct DropProbe {
    guard: Guard,
    in_flight_at_drop: Arc<std::sync::Mutex<Option<usize>>>,
}

impl Drop for DropProbe {
    fn drop(&mut self) {
        *self.in_flight_at_drop.lock().unwrap() = Some(self.guard.in_flight());
    }
}

/// A call that never ends on its own (or panics on its first poll) and owns a probe.
struct ProbedCall {
    _probe: DropProbe,
    panics: bool,
}

impl std::future::Future for ProbedCall {
    type Output = Result<(), ()>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        assert!(!self.panics, "the call panics");
        std::task::Poll::Pending
    }
}

#[tokio::test(start_paused = true)]
async fn the_permit_comes_back_only_after_the_calls_future_is_dropped() {
    // Cancelled by its caller, cut off by the total timeout, panicking: in each case the
    // call's future (closing its connection) is gone before the next caller gets in.
    for ending in ["cancelled", "timeout", "panic"] {
        let guard = guard("max_connections = 2\nbulkhead_wait = 10");
        let seen = Arc::new(std::sync::Mutex::new(None));
        let call = ProbedCall {
            _probe: DropProbe {
                guard: guard.clone(),
                in_flight_at_drop: seen.clone(),
            },
            panics: ending == "panic",
        };
        let task = {
            let guard = guard.clone();
            tokio::spawn(async move { guard.call(call).await })
        };
        if ending == "cancelled" {
            sleep(MS).await;
            task.abort();
        }
        let _ = task.await;
        assert_eq!(
            *seen.lock().unwrap(),
            Some(1),
            "{ending}: permit held at drop"
        );
        assert_eq!(guard.in_flight(), 0, "{ending}");
    }
}
