//! One subject of `benches/budget.sh`, in a binary of its own: `card` (a method written
//! as the guide's design card writes it, `#[circuit_breaker(system = "bench", …)]` on a
//! type whose derive names no system, whose body is the call, awaited in a loop), or
//! `empty` (the same loop, the call alone). Usage: `budget_card card|empty CALLS`.

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
struct Card {
    guard: Guard,
}

impl Card {
    #[outbound_guard::circuit_breaker(system = "bench", error_map = PortError::unavailable)]
    async fn call(&self, i: u64) -> Result<u64, PortError> {
        Ok(op_async(Mix::AllOk, i).await?)
    }
}

async fn card_loop(card: &Card, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        if let Ok(v) = card.call(black_box(i)).await {
            sum += v;
        }
    }
    sum
}

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let (subject, n) = args("card");
    let card = Card {
        guard: Guard::new(&settings()),
    };
    let runtime = runtime();
    let sum = match subject.as_str() {
        "card" => runtime.block_on(card_loop(&card, n)),
        "empty" => runtime.block_on(empty_async(n)),
        other => panic!("unknown subject `{other}`"),
    };
    black_box(sum);
}
