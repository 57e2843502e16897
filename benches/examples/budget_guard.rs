//! One subject of `benches/budget.sh`, in a binary of its own so that nothing else it
//! instantiates changes what LLVM inlines: `guard` (`Guard::call` on the call, awaited
//! in a loop on a current-thread runtime), or `empty` (the same loop, the call alone).
//! Usage: `budget_guard guard|empty CALLS`.

use std::hint::black_box;

use outbound_guard::Guard;
use outbound_guard_benches::budget::{args, empty_async};
use outbound_guard_benches::{op_async, runtime, settings, Mix};

async fn guard_loop(guard: &Guard, n: u64) -> u64 {
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
    let (subject, n) = args("guard");
    let guard = Guard::new(&settings());
    let runtime = runtime();
    let sum = match subject.as_str() {
        "guard" => runtime.block_on(guard_loop(&guard, n)),
        "empty" => runtime.block_on(empty_async(n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
