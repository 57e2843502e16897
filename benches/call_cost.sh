#!/bin/sh
# Instructions per call of each subject of examples/call_cost.rs, counted by valgrind's
# callgrind (deterministic: no timer noise on a shared machine). Each subject runs twice,
# with N1 and N2 calls; the difference of the totals divided by N2 - N1 is the cost of
# one call, start-up excluded.
#
# Usage: sh benches/call_cost.sh   (from the workspace root; needs valgrind)
set -eu
N1=${N1:-1000}
N2=${N2:-21000}
cargo build --release --quiet -p outbound-guard-benches --example call_cost --example call_cost_more
dir=${CARGO_TARGET_DIR:-target}/release/examples
total() { # example subject calls
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$dir/$1" "$2" "$3" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
for pair in call_cost:guard_call call_cost:attribute call_cost_more:call_with call_cost_more:adapter; do
    example=${pair%%:*}
    subject=${pair#*:}
    a=$(total "$example" "$subject" "$N1")
    b=$(total "$example" "$subject" "$N2")
    echo "$subject: $(( (b - a) / (N2 - N1) )) instructions per call"
done
