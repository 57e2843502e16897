//! Time per call under contention: ONE shared instance of each subject, a multi-thread
//! tokio runtime with 2 workers, 2 and 8 tasks sharing the work, every call ready at
//! once (so every call takes and returns its bulkhead permit while other workers do the
//! same). Subjects, measured side by side in one run, in a rotating order, `REPS` times:
//! - `guard`: one `Guard`, `Guard::call` in each task;
//! - `hand_written`: one fair tokio `Semaphore` with `tokio::time::timeout` and an
//!   elapsed check (`budget::hand_written`), what a user writes instead;
//! - `breaker`: one `Breaker`, `try_acquire` and the outcome recorded;
//! - `empty`: the call alone.
//!
//! The machine is shared and noisy: it prints each subject's median, minimum and maximum
//! ns per call, and the guard's ratio to the hand-written stack (median of the
//! repetitions' ratios, with their range: both subjects of a ratio ran back to back).
//!
//! `cargo run --release -p outbound-guard-benches --example contention -- [REPS] [CALLS]`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use outbound_guard::{Breaker, Guard};
use outbound_guard_benches::budget::{hand_written, PERMITS};
use outbound_guard_benches::{op, op_async, settings, Mix};
use tokio::sync::Semaphore;

const SUBJECTS: [&str; 4] = ["guard", "hand_written", "breaker", "empty"];
const TASKS: [u64; 2] = [2, 8];

/// The shared instances.
struct Shared {
    guard: Guard,
    semaphore: Semaphore,
    breaker: Breaker,
}

/// `calls` calls of `subject` in one task.
async fn task(shared: Arc<Shared>, subject: &'static str, calls: u64) -> u64 {
    let mut sum = 0;
    match subject {
        "guard" => {
            for i in 0..calls {
                if let Ok(Ok(v)) = shared.guard.call(op_async(Mix::AllOk, black_box(i))).await {
                    sum += v;
                }
            }
        }
        "hand_written" => {
            for i in 0..calls {
                if let Ok((Ok(v), _)) =
                    hand_written(&shared.semaphore, op_async(Mix::AllOk, black_box(i))).await
                {
                    sum += v;
                }
            }
        }
        "breaker" => {
            for i in 0..calls {
                let Ok(permit) = shared.breaker.try_acquire() else {
                    continue;
                };
                let result = op(Mix::AllOk, black_box(i));
                permit.finish(outbound_guard::Verdict::new(result.is_err()));
                if let Ok(v) = result {
                    sum += v;
                }
            }
        }
        "empty" => {
            for i in 0..calls {
                if let Ok(v) = op_async(Mix::AllOk, black_box(i)).await {
                    sum += v;
                }
            }
        }
        other => panic!("unknown subject `{other}`"),
    }
    sum
}

/// One timed run: `tasks` tasks sharing `calls` calls of `subject`; ns per call.
fn run(
    runtime: &tokio::runtime::Runtime,
    shared: &Arc<Shared>,
    subject: &'static str,
    tasks: u64,
    calls: u64,
) -> f64 {
    let elapsed: Duration = runtime.block_on(async {
        let began = Instant::now();
        let handles: Vec<_> = (0..tasks)
            .map(|_| tokio::spawn(task(Arc::clone(shared), subject, calls / tasks)))
            .collect();
        for handle in handles {
            black_box(handle.await.expect("a task panicked"));
        }
        began.elapsed()
    });
    elapsed.as_secs_f64() * 1e9 / (calls / tasks * tasks) as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        f64::midpoint(values[n / 2 - 1], values[n / 2])
    }
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let mut args = std::env::args().skip(1);
    let reps: usize = args.next().map_or(9, |n| n.parse().expect("a count"));
    let calls: u64 = args.next().map_or(400_000, |n| n.parse().expect("a count"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a multi-thread runtime");
    let shared = Arc::new(Shared {
        guard: Guard::new(&settings()),
        semaphore: Semaphore::new(PERMITS),
        breaker: Breaker::new(&settings()),
    });
    // Warm-up: every subject once.
    for &tasks in &TASKS {
        for subject in SUBJECTS {
            run(&runtime, &shared, subject, tasks, calls / 10);
        }
    }
    println!("{reps} repetitions of {calls} calls; ns per call: median [min, max]");
    for &tasks in &TASKS {
        let mut times = vec![Vec::new(); SUBJECTS.len()];
        for rep in 0..reps {
            for k in 0..SUBJECTS.len() {
                let s = (rep + k) % SUBJECTS.len();
                times[s].push(run(&runtime, &shared, SUBJECTS[s], tasks, calls));
            }
        }
        let mut ratios: Vec<f64> = times[0].iter().zip(&times[1]).map(|(g, h)| g / h).collect();
        let mut breaker_ratios: Vec<f64> =
            times[2].iter().zip(&times[1]).map(|(b, h)| b / h).collect();
        for (s, subject) in SUBJECTS.iter().enumerate() {
            let (min, max) = (
                times[s].iter().copied().fold(f64::INFINITY, f64::min),
                times[s].iter().copied().fold(0.0, f64::max),
            );
            println!(
                "{tasks} tasks  {subject:<13} {:7.1} [{min:.1}, {max:.1}]",
                median(&mut times[s])
            );
        }
        let (min, max) = (
            ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratios.iter().copied().fold(0.0, f64::max),
        );
        println!(
            "{tasks} tasks  guard / hand_written: {:.2} [{min:.2}, {max:.2}]; breaker / hand_written: {:.2}",
            median(&mut ratios),
            median(&mut breaker_ratios)
        );
    }
}
