//! Writes a generated recording for `outbound-guard replay`: a day of calls over three
//! systems, in the recorder's format, with incidents where the upstream fails.
//!
//! ```sh
//! cargo run --release -p outbound-guard-benches --example recording -- 10000000 > /tmp/day.jsonl
//! outbound-guard replay /tmp/day.jsonl --settings benches/resilience.toml
//! ```
//!
//! The calls are spread evenly over 24 hours (one every 8.64 ms for ten million) and
//! go round the three systems. Each system answers in 20–80 ms and fails one call in a
//! hundred; each has incidents where most calls fail or hang (per system: an error
//! burst at 03:00 for 2 minutes, a hang at 11:00 for 5 minutes, a slowdown at 17:00 for
//! 10 minutes). Deterministic: the same arguments write the same file.

use std::io::{BufWriter, Write};

/// 2026-12-01T00:00:00Z in milliseconds.
const DAY_START_MS: u64 = 1_796_083_200_000;
const SYSTEMS: [&str; 3] = ["sber", "customer", "ledger"];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn main() {
    let calls: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000_000);
    let day_us: u64 = 86_400_000_000;
    let every = day_us as f64 / calls as f64;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let out = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, out.lock());
    for i in 0..calls {
        let system = (i % 3) as usize;
        let start = (i as f64 * every) as u64;
        let hour = start as f64 / 3.6e9;
        // Each system's incidents, shifted by a quarter hour per system.
        let h = hour - system as f64 * 0.25;
        let (mut duration_ms, mut outcome) = (20.0 + 60.0 * rng.unit(), "success");
        if (3.0..3.0 + 2.0 / 60.0).contains(&h) {
            if rng.unit() < 0.8 {
                outcome = "failure";
            }
        } else if (11.0..11.0 + 5.0 / 60.0).contains(&h) {
            (duration_ms, outcome) = (35_000.0, "timeout");
        } else if (17.0..17.0 + 10.0 / 60.0).contains(&h) {
            duration_ms = 4_000.0 + 4_000.0 * rng.unit();
            outcome = if duration_ms > 5_000.0 {
                "slow"
            } else {
                "success"
            };
        } else if rng.unit() < 0.01 {
            outcome = "failure";
        }
        let us = DAY_START_MS * 1000 + start;
        let _ = writeln!(
            out,
            "{{\"system\":\"{}\",\"start\":{}.{:03},\"duration_ms\":{duration_ms:.3},\"outcome\":\"{outcome}\"}}",
            SYSTEMS[system],
            us / 1000,
            us % 1000
        );
    }
    let _ = out.flush();
}
