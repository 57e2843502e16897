//! One subject of `benches/budget.sh`, in a binary of its own: `breaker` (the breaker
//! alone: `Breaker::try_acquire`, the call, the outcome recorded), or `empty` (the same
//! loop, the call alone). Usage: `budget_breaker breaker|empty CALLS`.

use std::hint::black_box;

use outbound_guard::Breaker;
use outbound_guard_benches::budget::{args, empty_sync};
use outbound_guard_benches::{op, settings, Mix};

fn breaker_loop(breaker: &Breaker, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        let Ok(permit) = breaker.try_acquire() else {
            continue;
        };
        let result = op(Mix::AllOk, black_box(i));
        permit.finish(outbound_guard::Verdict::new(result.is_err()));
        if let Ok(v) = result {
            sum += v;
        }
    }
    sum
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let (subject, n) = args("breaker");
    let breaker = Breaker::new(&settings());
    let sum = match subject.as_str() {
        "breaker" => breaker_loop(&breaker, n),
        "empty" => empty_sync(n),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
