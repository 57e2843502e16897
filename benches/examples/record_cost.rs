//! The recorder's per-call cost: `Guard::call` with no observer, and with a
//! `Recorder` (`outbound-guard-recorder`) writing to a file, side by side.
//!
//! ```sh
//! cargo run --release -p outbound-guard-benches --example record_cost            # timing, alternating
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/record_cost off|on 1000|21000                      # instructions
//! ```
//!
//! Timing: rounds of 200 000 calls, off and on alternating (the machine's speed moves),
//! each call returning `Ok` at once on a current-thread runtime; the median of the
//! rounds' ns per call. The writer thread runs beside on the other core and is not
//! counted in the caller's time (it is in callgrind's count, which takes every thread).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use outbound_guard::Guard;
use outbound_guard_benches::{quiet_subscriber, runtime, settings};
use outbound_guard_recorder::{Recorder, RecorderOptions};

async fn calls(guard: &Guard, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(Ok(v)) = guard.call(async move { Ok::<_, ()>(black_box(i)) }).await {
            sum += v;
        }
    }
    sum
}

fn guard(recorder: Option<&Arc<Recorder>>) -> Guard {
    let settings = settings();
    let builder = Guard::builder(&settings);
    match recorder {
        Some(recorder) => builder.observer(recorder.clone()).build(),
        None => builder.build(),
    }
}

fn main() {
    quiet_subscriber();
    let rt = runtime();
    let path = std::env::temp_dir().join(format!("record-cost-{}.jsonl", std::process::id()));
    let recorder = Arc::new(
        Recorder::to_file(
            &path,
            RecorderOptions::default().max_bytes(64 << 20).keep(0),
        )
        .expect("a file in the temporary directory"),
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, n] = &args[..] {
        // One subject, for callgrind.
        let n: u64 = n.parse().expect("a number of calls");
        let guard = guard((mode == "on").then_some(&recorder));
        black_box(rt.block_on(calls(&guard, n)));
        recorder.flush();
    } else {
        let (off, on) = (guard(None), guard(Some(&recorder)));
        let n = 200_000;
        let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
        for _ in 0..15 {
            for (guard, times) in [(&off, &mut t_off), (&on, &mut t_on)] {
                let start = Instant::now();
                black_box(rt.block_on(calls(guard, n)));
                times.push(start.elapsed().as_nanos() as f64 / n as f64);
            }
            // Let the writer catch up, so that the next round finds room in the queue.
            recorder.flush();
        }
        let median = |t: &mut Vec<f64>| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        };
        let (off_ns, on_ns) = (median(&mut t_off), median(&mut t_on));
        let stats = recorder.stats();
        println!("Guard::call, no observer:   {off_ns:.0} ns a call (median of 15 rounds of {n})");
        println!(
            "Guard::call, recorder on:   {on_ns:.0} ns a call (+{:.0} ns)",
            on_ns - off_ns
        );
        println!(
            "recorder: {} written, {} dropped (queue full), {} dropped (write errors)",
            stats.written, stats.dropped_queue_full, stats.dropped_write_error
        );
    }
    let _ = std::fs::remove_file(&path);
}
