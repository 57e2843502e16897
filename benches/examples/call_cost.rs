//! Runs `n` calls of one subject, for counting instructions per call with
//! `benches/call_cost.sh` (valgrind's callgrind): `cargo run --release -p
//! outbound-guard-benches --example call_cost -- <subject> <n>`.
//!
//! Subjects, each running the same body (an `async` block awaiting the call and
//! converting its error with `?`, as an adapter method does): `guard_call`
//! (`Guard::call`) and `attribute` (a `#[circuit_breaker]` method with `failure_if`).
//! Only these two are in this binary: what else a binary instantiates changes what
//! LLVM inlines, so the other subjects are in `call_cost_more`. Every call returns `Ok`
//! at once, so the breaker stays closed and each subject runs its hot path.

use std::hint::black_box;

use outbound_guard::{CircuitBreakerError, Guard, Guarded};
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
struct Adapter {
    guard: Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(
        system = "bench",
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage
    )]
    async fn call(&self, i: u64) -> Result<u64, PortError> {
        Ok(op_async(Mix::AllOk, i).await?)
    }
}

/// Each subject's loop is its own future, so no subject's state is in another's.
async fn guard_call(guard: &Guard, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        let body = async move { Ok::<_, PortError>(op_async(Mix::AllOk, black_box(i)).await?) };
        if let Ok(Ok(v)) = guard.call(body).await {
            sum += v;
        }
    }
    sum
}

async fn attribute(adapter: &Adapter, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(v) = adapter.call(black_box(i)).await {
            sum += v;
        }
    }
    sum
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let mut args = std::env::args().skip(1);
    let subject = args.next().unwrap_or_else(|| "guard_call".to_owned());
    let n: u64 = args.next().map_or(1000, |n| n.parse().expect("a count"));
    let guard = Guard::new(&settings());
    let runtime = runtime();
    let sum = match subject.as_str() {
        "guard_call" => runtime.block_on(guard_call(&guard, n)),
        "attribute" => runtime.block_on(attribute(&Adapter { guard }, n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
