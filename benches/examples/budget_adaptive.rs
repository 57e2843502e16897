//! The adaptive bulkhead's cost per call, beside `benches/budget.sh`'s subjects, in a
//! binary of its own: `adaptive` (`Guard::call` with `bulkhead = "adaptive"`, the loop
//! of `budget_guard`), or `empty` (the same loop, the call alone). Every call succeeds
//! at once, so every call is a sample, every tenth closes a window, and the limit,
//! starting at its floor (1, the loop's one caller), stays there: the bulkhead is never
//! full beyond it. Usage: `budget_adaptive adaptive|empty CALLS`; counted as budget.sh
//! counts: `valgrind --tool=callgrind` at 2,000 and 22,000 calls.

use std::hint::black_box;

use outbound_guard::{Guard, SystemSettings};
use outbound_guard_benches::budget::{args, empty_async};
use outbound_guard_benches::{op_async, runtime, Mix};

async fn adaptive_loop(guard: &Guard, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(Ok(v)) = guard.call(op_async(Mix::AllOk, black_box(i))).await {
            sum += v;
        }
    }
    sum
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let (subject, n) = args("adaptive");
    // The bench's breaker settings, the bulkhead adaptive.
    let base = outbound_guard_benches::settings();
    let settings = SystemSettings::builder("bench")
        .cb_window_size(base.cb_window_size())
        .cb_min_calls(base.cb_min_calls())
        .cb_failure_rate(base.cb_failure_rate())
        .cb_open_duration(base.cb_open_duration())
        .cb_half_open_calls(base.cb_half_open_calls())
        .bulkhead("adaptive")
        .build()
        .expect("valid settings");
    let guard = Guard::new(&settings);
    let runtime = runtime();
    let sum = match subject.as_str() {
        "adaptive" => runtime.block_on(adaptive_loop(&guard, n)),
        "empty" => runtime.block_on(empty_async(n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
