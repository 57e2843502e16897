//! Runs `n` calls of one subject, for counting instructions per call with
//! `benches/call_cost.sh` (valgrind's callgrind): `cargo run --release -p
//! resilience-benches --example call_cost -- <subject> <n>`.
//!
//! Subjects: `guard_call` (`Guard::call`), `call_with` (`Guard::call_with` with
//! `failure_if`), `attribute` (a `#[circuit_breaker]` method with `failure_if`),
//! `adapter` (a method of an `#[adapter]` block). Every call returns `Ok` at once,
//! so the breaker stays closed and each subject runs its hot path.

use std::hint::black_box;

use resilience::{CallOptions, CircuitBreakerError, Guard, Guarded};
use resilience_benches::{op_async, runtime, settings, Boom, Mix};

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
    #[resilience::circuit_breaker(
        system = "bench",
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage
    )]
    async fn call(&self, i: u64) -> Result<u64, PortError> {
        Ok(op_async(Mix::AllOk, i).await?)
    }
}

#[derive(Guarded)]
struct Block {
    guard: Guard,
}

#[resilience::adapter(system = "bench", error_map = PortError::unavailable, failure_if = PortError::is_outage)]
impl Block {
    async fn call(&self, i: u64) -> Result<u64, PortError> {
        Ok(op_async(Mix::AllOk, i).await?)
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let subject = args.next().unwrap_or_else(|| "guard_call".to_owned());
    let n: u64 = args.next().map_or(1000, |n| n.parse().expect("a count"));
    let guard = Guard::new(&settings());
    let runtime = runtime();
    let adapter = Adapter {
        guard: guard.clone(),
    };
    let block = Block {
        guard: guard.clone(),
    };
    runtime.block_on(async {
        let mut sum = 0;
        for i in 0..n {
            sum += match subject.as_str() {
                "guard_call" => guard
                    .call(op_async(Mix::AllOk, black_box(i)))
                    .await
                    .ok()
                    .and_then(Result::ok),
                "call_with" => guard
                    .call_with(
                        CallOptions::new().failure_if(|_: &Boom| true),
                        op_async(Mix::AllOk, black_box(i)),
                    )
                    .await
                    .ok()
                    .and_then(Result::ok),
                "attribute" => adapter.call(black_box(i)).await.ok(),
                "adapter" => block.call(black_box(i)).await.ok(),
                other => panic!("unknown subject `{other}`"),
            }
            .unwrap_or(0);
        }
        black_box(sum);
    });
}
