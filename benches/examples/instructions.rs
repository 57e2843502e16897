//! Instructions per call of one subject on one thread, for a machine-independent
//! comparison (the benchmark VM is shared and noisy; instruction counts are not):
//!
//! ```text
//! cargo build --release -p outbound-guard-benches --example instructions
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/instructions guard err10 20000
//! ```
//!
//! Run it with 0 and with N calls; (Ir(N) − Ir(0)) / N is the cost of one call.
//! Subjects: `breaker` (our breaker alone), `guard` (`Guard::call`), `recloser`
//! (`Recloser::call`, the control); mixes `all_ok` and `err10`, as in the benchmarks.

use outbound_guard::Verdict;
use std::hint::black_box;

use outbound_guard::{Breaker, Guard};
use outbound_guard_benches::{op, op_async, recloser, runtime, settings, Mix};

fn main() {
    outbound_guard_benches::quiet_subscriber();
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: instructions breaker|guard|recloser all_ok|err10 CALLS";
    let [_, subject, mix, calls] = args.as_slice() else {
        panic!("{usage}");
    };
    let mix = match mix.as_str() {
        "all_ok" => Mix::AllOk,
        "err10" => Mix::TenPercentErr,
        _ => panic!("{usage}"),
    };
    let calls: u64 = calls.parse().expect(usage);
    match subject.as_str() {
        "breaker" => {
            let breaker = Breaker::new(&settings());
            for i in 0..calls {
                let permit = breaker.try_acquire().expect("never opens");
                let result = op(mix, black_box(i));
                if result.is_ok() {
                    permit.finish(Verdict::SUCCESS);
                } else {
                    permit.finish(Verdict::FAILURE);
                }
                let _ = black_box(result);
            }
        }
        "guard" => {
            let guard = Guard::new(&settings());
            runtime().block_on(async {
                for i in 0..calls {
                    let _ = black_box(guard.call(op_async(mix, black_box(i))).await);
                }
            });
        }
        "recloser" => {
            let recloser = recloser();
            for i in 0..calls {
                let _ = black_box(recloser.call(|| op(mix, black_box(i))));
            }
        }
        _ => panic!("{usage}"),
    }
}
