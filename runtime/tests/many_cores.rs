//! The bulkhead on as many worker threads as the machine has (at least 4, so a 2-core
//! box still interleaves them): callers cancelled at random while they wait for a permit
//! and while they run, callers whose wait runs out, and a reload resizing the bulkhead
//! under them. Throughout, never more callers inside than the largest size set; at the
//! end every permit is back where the next caller finds it, nobody is counted waiting,
//! and exactly the size can be held at once. Bounded in count and time.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;

use outbound_guard::{Guards, Settings};

fn settings(max_connections: u32) -> Settings {
    Settings::parse(
        &format!(
            "[systems.sber]\nread_timeout = 10\ntotal_timeout = 12\nmax_connections = \
             {max_connections}\nbulkhead_wait = 0.003\ncb_mode = \"disabled\"\n"
        ),
        "inline",
    )
    .unwrap()
}

/// A small random stream per caller (xorshift), so each run's choices differ by seed.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

/// One caller inside, counted until dropped (a cancelled call too).
struct Inside<'a>(&'a AtomicUsize);

impl<'a> Inside<'a> {
    fn enter(now: &'a AtomicUsize, most: &AtomicUsize) -> Self {
        let inside = now.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(inside, Ordering::SeqCst);
        Inside(now)
    }
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn callers_cancelled_at_random_on_every_core_under_resizes_lose_and_make_no_permit() {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get().max(4));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_time()
        .build()
        .unwrap();
    // max_connections 5 → 4 permits, 10 → 8.
    let guards = Guards::builder(&settings(5)).build();
    let sber = guards.get("sber").unwrap().clone();
    assert_eq!(sber.bulkhead_permits(), 4);
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let calls = Arc::new(AtomicUsize::new(0));
    let resizing = Arc::new(AtomicBool::new(true));
    runtime.block_on(async {
        let reload = {
            let (guards, resizing) = (guards.clone(), resizing.clone());
            tokio::spawn(async move {
                let mut dice = Dice(0x9E37_79B9_7F4A_7C15);
                while resizing.load(Ordering::SeqCst) {
                    let connections = if dice.roll(2) == 0 { 5 } else { 10 };
                    guards.reload(&settings(connections)).unwrap();
                    tokio::time::sleep(Duration::from_micros(300 + dice.roll(700))).await;
                }
                guards.reload(&settings(5)).unwrap();
            })
        };
        let callers: Vec<_> = (0..threads as u64 * 8)
            .map(|caller| {
                let (sber, now, most, calls) =
                    (sber.clone(), now.clone(), most.clone(), calls.clone());
                tokio::spawn(async move {
                    let mut dice = Dice(caller.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
                    for _ in 0..600 {
                        let work = Duration::from_micros(dice.roll(400));
                        let call = sber.call(async {
                            let _inside = Inside::enter(&now, &most);
                            calls.fetch_add(1, Ordering::Relaxed);
                            if work.is_zero() {
                                tokio::task::yield_now().await;
                            } else {
                                tokio::time::sleep(work).await;
                            }
                            Ok::<_, ()>(())
                        });
                        match dice.roll(4) {
                            // Cancelled at a random point: waiting, or running.
                            0 | 1 => {
                                let cut = Duration::from_micros(dice.roll(500));
                                let _ = tokio::time::timeout(cut, call).await;
                            }
                            // Dropped after its first poll.
                            2 => {
                                let mut call = pin!(call);
                                let _ = call.as_mut().poll(&mut Context::from_waker(Waker::noop()));
                            }
                            // Waits its 3 ms at most and runs, or is refused.
                            _ => {
                                let _ = call.await;
                            }
                        }
                    }
                })
            })
            .collect();
        let churn = async {
            for caller in callers {
                caller.await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(120), churn)
            .await
            .expect("the churn ends in time");
        resizing.store(false, Ordering::SeqCst);
        reload.await.unwrap();
    });
    assert!(
        calls.load(Ordering::Relaxed) > 1_000,
        "a churn, not a trickle"
    );
    let most = most.load(Ordering::SeqCst);
    assert!(
        (1..=8).contains(&most),
        "{most} callers inside, at most 8 permits ever set"
    );
    assert_eq!(sber.bulkhead_permits(), 4);
    assert_eq!(sber.in_flight(), 0, "every permit came back");
    // Exactly four can be held at once: none stranded in the line, none made.
    runtime.block_on(async {
        let (release, hold) = tokio::sync::watch::channel(());
        let holders: Vec<_> = (0..4)
            .map(|_| {
                let (sber, mut hold) = (sber.clone(), hold.clone());
                tokio::spawn(async move {
                    sber.call(async move {
                        let _ = hold.changed().await;
                        Ok::<_, ()>(())
                    })
                    .await
                })
            })
            .collect();
        tokio::time::timeout(Duration::from_secs(10), async {
            while sber.in_flight() < 4 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("four callers get in");
        let refused = sber.call(async { Ok::<_, ()>(()) }).await;
        assert!(refused.is_err(), "the fifth caller finds the bulkhead full");
        release.send(()).unwrap();
        for holder in holders {
            assert!(holder.await.unwrap().is_ok());
        }
    });
    assert_eq!(sber.in_flight(), 0);
}
