//! Bounded stress on real threads: observers that panic and observers that are slow
//! while many callers flap the breaker, and a saturated bulkhead. Nothing may leak a
//! permit, wedge the breaker or starve a caller; each test ends well within its bound.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{CallEvent, Guard, Observer, Settings, State, Transition};

/// Panics on every third transition and every seventh call it is told of.
#[derive(Default)]
struct Panicky {
    transitions: AtomicUsize,
    calls: AtomicUsize,
}

impl Observer for Panicky {
    fn on_transition(&self, t: &Transition<'_>) {
        assert!(
            self.transitions.fetch_add(1, Ordering::Relaxed) % 3 != 0,
            "observer panics on {} → {}",
            t.from,
            t.to
        );
    }

    fn on_call(&self, _: &CallEvent<'_>) {
        assert!(
            self.calls.fetch_add(1, Ordering::Relaxed) % 7 != 0,
            "observer panics on a call"
        );
    }
}

/// Takes its time over every transition and keeps the chain it was told.
#[derive(Default)]
struct Slow(Mutex<Vec<(State, State)>>);

impl Observer for Slow {
    fn on_transition(&self, t: &Transition<'_>) {
        std::thread::sleep(Duration::from_micros(200));
        self.0.lock().unwrap().push((t.from, t.to));
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

fn guard(toml: &str, observers: Vec<Arc<dyn Observer>>) -> Guard {
    let settings = Settings::parse(toml, "inline").unwrap();
    let builder = Guard::builder(settings.system("sber").unwrap());
    observers
        .into_iter()
        .fold(builder, outbound_guard::GuardBuilder::observer)
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn panicking_and_slow_observers_neither_leak_nor_wedge() {
    let slow = Arc::new(Slow::default());
    let guard = guard(
        "[systems.sber]\nread_timeout = 10\ntotal_timeout = 12\ncb_window_size = 4\ncb_min_calls = 2\ncb_failure_rate = 0.5\ncb_open_duration = 0.001\ncb_half_open_calls = 2\nmax_connections = 10\nbulkhead_wait = 5",
        vec![Arc::new(Panicky::default()), slow.clone()],
    );
    let storm = async {
        let tasks: Vec<_> = (0..16u64)
            .map(|t| {
                let guard = guard.clone();
                tokio::spawn(async move {
                    for i in 0..300u64 {
                        let failed = (i * 7 + t) % 5 < 2;
                        // The observers' panics are contained: no call panics.
                        let _ = guard
                            .call(async move {
                                tokio::task::yield_now().await;
                                if failed {
                                    Err(())
                                } else {
                                    Ok(())
                                }
                            })
                            .await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("no caller panics");
        }
    };
    tokio::time::timeout(Duration::from_secs(60), storm)
        .await
        .expect("the storm ends in time");
    assert_eq!(guard.in_flight(), 0, "every permit back");
    // The breaker still works: successes close it (waiting out an open period first).
    let recovered = async {
        while guard.breaker().state() != State::Closed {
            let _ = guard.call(async { Ok::<_, ()>(()) }).await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), recovered)
        .await
        .expect("the breaker closes again");
    let chain = slow.0.lock().unwrap();
    assert!(!chain.is_empty(), "the storm made transitions");
    let mut at = State::Closed;
    for &(from, to) in chain.iter() {
        assert_eq!(from, at, "the slow observer saw every transition, in order");
        at = to;
    }
    assert_eq!(at, guard.breaker().state());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_saturated_bulkhead_serves_every_caller_within_its_wait() {
    // 32 callers, 3 permits, 5 s of patience: nobody is refused, never more than 3 in.
    let guard = guard(
        "[systems.sber]\nread_timeout = 10\ntotal_timeout = 12\nmax_connections = 4\nbulkhead_wait = 5",
        Vec::new(),
    );
    assert_eq!(guard.bulkhead_permits(), 3);
    let (now, max) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let saturation = async {
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let (guard, now, max) = (guard.clone(), now.clone(), max.clone());
                tokio::spawn(async move {
                    let mut refused = 0;
                    for _ in 0..100 {
                        let call = async {
                            let inside = now.fetch_add(1, Ordering::SeqCst) + 1;
                            max.fetch_max(inside, Ordering::SeqCst);
                            tokio::task::yield_now().await;
                            now.fetch_sub(1, Ordering::SeqCst);
                            Ok::<_, ()>(())
                        };
                        if guard.call(call).await.is_err() {
                            refused += 1;
                        }
                    }
                    refused
                })
            })
            .collect();
        let mut refused = 0;
        for task in tasks {
            refused += task.await.unwrap();
        }
        refused
    };
    let refused = tokio::time::timeout(Duration::from_secs(60), saturation)
        .await
        .expect("the saturation ends in time");
    assert_eq!(refused, 0, "first come, first served: nobody waits 5 s");
    assert!((1..=3).contains(&max.load(Ordering::SeqCst)));
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_cancelled_and_timing_out_on_many_threads_lose_no_permit() {
    // The bulkhead's free permits live in one word while nobody waits and in tokio's
    // semaphore while anyone does: callers that give up at every point of that hand-over
    // (cancelled while waiting, timed out, just as a permit reaches them) must leave
    // every permit where the next caller finds it, and never let more than 3 in.
    let guard = guard(
        "[systems.sber]\nread_timeout = 10\ntotal_timeout = 12\nmax_connections = 4\nbulkhead_wait = 0.002",
        Vec::new(),
    );
    assert_eq!(guard.bulkhead_permits(), 3);
    let (now, max) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let churn = async {
        let tasks: Vec<_> = (0..24u64)
            .map(|task| {
                let (guard, now, max) = (guard.clone(), now.clone(), max.clone());
                tokio::spawn(async move {
                    for round in 0..200u64 {
                        let call = async {
                            // Counted out when the call ends or is dropped.
                            let inside = Inside::enter(&now);
                            max.fetch_max(inside.0, Ordering::SeqCst);
                            tokio::task::yield_now().await;
                            drop(inside);
                            Ok::<_, ()>(())
                        };
                        match (task + round) % 3 {
                            // Cancelled after a poll or two: while waiting, or running.
                            0 => {
                                let _ = tokio::time::timeout(
                                    Duration::from_micros(50),
                                    guard.call(call),
                                )
                                .await;
                            }
                            // Dropped right after its first poll.
                            1 => {
                                let mut call = std::pin::pin!(guard.call(call));
                                let _ = futures_poll_once(call.as_mut()).await;
                            }
                            // Waits (2 ms at most) and runs, or is refused.
                            _ => {
                                let _ = guard.call(call).await;
                            }
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(60), churn)
        .await
        .expect("the churn ends in time");
    assert!((1..=3).contains(&max.load(Ordering::SeqCst)));
    assert_eq!(guard.in_flight(), 0, "every permit came back");
    // And all three can be held at once again: none is stranded.
    let (release, hold) = tokio::sync::watch::channel(());
    let holders: Vec<_> = (0..3)
        .map(|_| {
            let (guard, mut hold) = (guard.clone(), hold.clone());
            tokio::spawn(async move {
                guard
                    .call(async move {
                        let _ = hold.changed().await;
                        Ok::<_, ()>(())
                    })
                    .await
            })
        })
        .collect();
    while guard.in_flight() < 3 {
        tokio::task::yield_now().await;
    }
    let refused = guard.call(async { Ok::<_, ()>(()) }).await;
    assert!(
        refused.is_err(),
        "the fourth caller finds the bulkhead full"
    );
    release.send(()).unwrap();
    for holder in holders {
        assert!(holder.await.unwrap().is_ok());
    }
    assert_eq!(guard.in_flight(), 0);
}

/// Polls `future` once and returns whether it was ready.
async fn futures_poll_once<F: std::future::Future>(future: std::pin::Pin<&mut F>) -> bool {
    let mut future = Some(future);
    std::future::poll_fn(move |cx| {
        let ready = future.take().unwrap().poll(cx).is_ready();
        std::task::Poll::Ready(ready)
    })
    .await
}

/// One call inside the bulkhead, counted in `.1` until dropped (a cancelled call too).
struct Inside<'a>(usize, &'a AtomicUsize);

impl<'a> Inside<'a> {
    fn enter(now: &'a AtomicUsize) -> Self {
        Inside(now.fetch_add(1, Ordering::SeqCst) + 1, now)
    }
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.1.fetch_sub(1, Ordering::SeqCst);
    }
}
