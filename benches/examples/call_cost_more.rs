//! The other subjects of `benches/call_cost.sh`, in a binary of their own (see
//! `call_cost`): `call_with` (`Guard::call_with` with `failure_if`) and `adapter` (a
//! method of an `#[adapter]` block, with `failure_if`), on the same body.

use std::hint::black_box;

use outbound_guard::{CallOptions, CircuitBreakerError, Guard, Guarded};
use outbound_guard_benches::{op_async, runtime, settings, Boom, Mix};

#[derive(Debug)]
enum PortError {
    Unavailable,
    Call,
}

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError::Unavailable
    }

    fn is_outage(&self) -> bool {
        matches!(self, PortError::Unavailable)
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

#[outbound_guard::adapter(system = "bench", error_map = PortError::unavailable, failure_if = PortError::is_outage)]
impl Block {
    async fn call(&self, i: u64) -> Result<u64, PortError> {
        Ok(op_async(Mix::AllOk, i).await?)
    }
}

/// Each subject's loop is its own future, so no subject's state is in another's.
async fn call_with(guard: &Guard, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        let body = async move { Ok::<_, PortError>(op_async(Mix::AllOk, black_box(i)).await?) };
        let options = CallOptions::new().failure_if(PortError::is_outage);
        if let Ok(Ok(v)) = guard.call_with(options, body).await {
            sum += v;
        }
    }
    sum
}

async fn adapter(block: &Block, n: u64) -> u64 {
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
    let mut args = std::env::args().skip(1);
    let subject = args.next().unwrap_or_else(|| "call_with".to_owned());
    let n: u64 = args.next().map_or(1000, |n| n.parse().expect("a count"));
    let guard = Guard::new(&settings());
    let runtime = runtime();
    let sum = match subject.as_str() {
        "call_with" => runtime.block_on(call_with(&guard, n)),
        "adapter" => runtime.block_on(adapter(&Block { guard }, n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
