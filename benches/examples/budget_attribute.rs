//! One subject of `benches/budget.sh`, in a binary of its own: `attribute` (a method of
//! an `#[outbound_guard::adapter]` block, whose body is the call, awaited in a loop), or
//! `empty` (the same loop, the call alone). Usage: `budget_attribute attribute|empty CALLS`.

use std::hint::black_box;

use outbound_guard::{CircuitBreakerError, Guard, Guarded};
use outbound_guard_benches::budget::{args, empty_async};
use outbound_guard_benches::{op_async, runtime, settings, Boom, Mix};

/// The port's error: the guard's refusal, or the call's own.
#[derive(Debug)]
enum PortError {
    Unavailable,
    Call,
}

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError::Unavailable
    }
}

impl From<Boom> for PortError {
    fn from(_: Boom) -> Self {
        PortError::Call
    }
}

#[derive(Guarded)]
#[guarded(system = "bench")]
struct Block {
    guard: Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Block {
    async fn call(&self, i: u64) -> Result<u64, PortError> {
        Ok(op_async(Mix::AllOk, i).await?)
    }
}

async fn attribute_loop(block: &Block, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(v) = block.call(black_box(i)).await {
            sum += v;
        }
    }
    sum
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let (subject, n) = args("attribute");
    let block = Block {
        guard: Guard::new(&settings()),
    };
    let runtime = runtime();
    let sum = match subject.as_str() {
        "attribute" => runtime.block_on(attribute_loop(&block, n)),
        "empty" => runtime.block_on(empty_async(n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
