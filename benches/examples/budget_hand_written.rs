//! One subject of `benches/budget.sh`, in a binary of its own: `hand_written` (what a
//! user writes instead of the guard: a fair tokio `Semaphore`, `tokio::time::timeout`
//! and an elapsed check, see `budget::hand_written`), or `empty` (the same loop, the
//! call alone). Usage: `budget_hand_written hand_written|empty CALLS`.

use std::hint::black_box;

use outbound_guard_benches::budget::{args, empty_async, hand_written, PERMITS};
use outbound_guard_benches::{op_async, runtime, Mix};
use tokio::sync::Semaphore;

async fn hand_written_loop(semaphore: &Semaphore, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok((Ok(v), _slow)) =
            hand_written(semaphore, op_async(Mix::AllOk, black_box(i))).await
        {
            sum += v;
        }
    }
    sum
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let (subject, n) = args("hand_written");
    let semaphore = Semaphore::new(PERMITS);
    let runtime = runtime();
    let sum = match subject.as_str() {
        "hand_written" => runtime.block_on(hand_written_loop(&semaphore, n)),
        "empty" => runtime.block_on(empty_async(n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
