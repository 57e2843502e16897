//! The hot path side by side, in one run: a bare call, our breaker alone, our full
//! guard, and recloser 1.4, failsafe 1.3 and tower-resilience-circuitbreaker 0.14 each
//! wrapping the same call; on one thread and with two threads sharing one instance.
//!
//! Groups are `<mix>/<threads>`: `all_ok` or `err10` (one call in ten fails), on
//! `1_thread` or `2_threads`. Every bench reports the time of one call; with two
//! threads that is the wall time of the run divided by all calls made by both.
//!
//! Run alone, so no other member's dev-dependency features (tokio's `test-util`) leak
//! in: `cargo bench -p outbound-guard-benches`.

use outbound_guard::Verdict;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use failsafe::CircuitBreaker as _;
use outbound_guard::{Breaker, Guard};
use outbound_guard_benches::{
    failsafe, op, op_async, recloser, run_on_threads, settings, timed, timed_async, tower_breaker,
    Mix,
};
use recloser::AsyncRecloser;
use tower::{Service, ServiceExt};

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Registers one subject: `body` is run by [`run_on_threads`] with the group's thread
/// count, for as many iterations as criterion asks.
fn subject<B>(group: &mut Group<'_>, name: &str, threads: usize, body: B)
where
    B: Fn(std::ops::Range<u64>, &Barrier) -> Duration + Sync,
{
    group.bench_function(name, |b| {
        b.iter_custom(|iters| run_on_threads(threads, iters, &body));
    });
}

/// Every subject of one `<mix>/<threads>` group.
fn group(c: &mut Criterion, mix: Mix, threads: usize) {
    let label = if threads == 1 {
        "1_thread"
    } else {
        "2_threads"
    };
    let mut g = c.benchmark_group(format!("{}/{label}", mix.name()));

    // The call alone, synchronous and as an awaited `async fn` on the runtime.
    subject(&mut g, "bare_sync", threads, |range, start| {
        timed(start, || {
            for i in range {
                let _ = black_box(op(mix, black_box(i)));
            }
        })
    });
    subject(&mut g, "bare_async", threads, |range, start| {
        timed_async(start, async {
            for i in range {
                let _ = black_box(op_async(mix, black_box(i)).await);
            }
        })
    });

    // Our breaker alone: admission and recording, no clock read in the closed state.
    let breaker = Breaker::new(&settings());
    subject(&mut g, "ours_breaker", threads, |range, start| {
        timed(start, || {
            for i in range {
                let permit = breaker.try_acquire().expect("never opens");
                let result = op(mix, black_box(i));
                if result.is_ok() {
                    permit.finish(Verdict::SUCCESS);
                } else {
                    permit.finish(Verdict::FAILURE);
                }
                let _ = black_box(result);
            }
        })
    });

    // Our full guard: bulkhead → breaker → total timeout → call → elapsed check.
    let guard = Guard::new(&settings());
    subject(&mut g, "ours_guard", threads, |range, start| {
        timed_async(start, async {
            for i in range {
                let _ = black_box(guard.call(op_async(mix, black_box(i))).await);
            }
        })
    });

    // recloser: its synchronous `call`, and `AsyncRecloser` around the async fn.
    let sync_recloser = recloser();
    subject(&mut g, "recloser_sync", threads, |range, start| {
        timed(start, || {
            for i in range {
                let _ = black_box(sync_recloser.call(|| op(mix, black_box(i))));
            }
        })
    });
    let async_recloser = AsyncRecloser::from(recloser());
    subject(&mut g, "recloser_async", threads, |range, start| {
        timed_async(start, async {
            for i in range {
                let _ = black_box(async_recloser.call(op_async(mix, black_box(i))).await);
            }
        })
    });

    // failsafe: its synchronous `CircuitBreaker::call`.
    let failsafe = failsafe();
    subject(&mut g, "failsafe_sync", threads, |range, start| {
        timed(start, || {
            for i in range {
                let _ = black_box(failsafe.call(|| op(mix, black_box(i))));
            }
        })
    });

    // tower-resilience: the breaker's Service around `service_fn(op)`, `ready` + `call`;
    // each thread drives its own clone of the one shared breaker.
    let tower = tower_breaker(mix);
    subject(&mut g, "tower_breaker", threads, |range, start| {
        let mut svc = tower.clone();
        timed_async(start, async move {
            for i in range {
                let ready = svc.ready().await.expect("never opens");
                let _ = black_box(ready.call(black_box(i)).await);
            }
        })
    });

    g.finish();
}

fn benches(c: &mut Criterion) {
    outbound_guard_benches::quiet_subscriber();
    for mix in Mix::ALL {
        for threads in [1, 2] {
            group(c, mix, threads);
        }
    }
}

criterion_group! {
    name = hot_path;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(hot_path);
