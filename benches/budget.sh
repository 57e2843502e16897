#!/bin/sh
# Instructions per call over an empty loop, counted by valgrind's callgrind (deterministic:
# no timer noise on a shared machine), for the budgets of the hot path. One thread; each
# subject is a binary of its own (examples/budget_*.rs), so what LLVM inlines in one does
# not change another:
#   guard         Guard::call
#   breaker       the breaker alone: Breaker::try_acquire, the call, the outcome recorded
#   attribute     a method of an #[outbound_guard::adapter] block naming no system (its type's derive names it)
#   card          a method as the design card writes it: #[circuit_breaker(system = …)]
#   hand_written  a fair tokio Semaphore + tokio::time::timeout + an elapsed check
# Each binary also runs its empty loop (the same loop, the call alone). Every loop runs
# with N1 and N2 calls; (Ir(N2) - Ir(N1)) / (N2 - N1) is one iteration, start-up
# excluded, and a subject's figure is its iteration minus its binary's empty one.
#
# Usage: sh benches/budget.sh            build, then count (from the workspace root)
#        sh benches/budget.sh DIR...     count prebuilt binaries in each DIR, side by side
#                                        (one column per DIR: checkouts compared in one run)
set -eu
N1=${N1:-2000}
N2=${N2:-22000}
subjects="guard:guard breaker:breaker attribute:attribute card:card hand_written:hand_written"
if [ $# -eq 0 ]; then
    cargo build --release --quiet -p outbound-guard-benches \
        --example budget_guard --example budget_breaker \
        --example budget_attribute --example budget_card --example budget_hand_written
    set -- "${CARGO_TARGET_DIR:-target}/release/examples"
fi
total() { # binary subject calls
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
per_call() { # binary subject: instructions of one iteration, x100 (two decimals)
    a=$(total "$1" "$2" "$N1")
    b=$(total "$1" "$2" "$N2")
    echo $(( (b - a) * 100 / (N2 - N1) ))
}
printf '%-14s' subject
for dir in "$@"; do printf ' | %s' "$dir"; done
echo
for pair in $subjects; do
    binary=budget_${pair%%:*}
    subject=${pair#*:}
    printf '%-14s' "$subject"
    for dir in "$@"; do
        full=$(per_call "$dir/$binary" "$subject")
        empty=$(per_call "$dir/$binary" empty)
        d=$((full - empty))
        printf ' | %d.%02d (loop %d.%02d, empty %d.%02d)' $((d / 100)) $((d % 100)) \
            $((full / 100)) $((full % 100)) $((empty / 100)) $((empty % 100))
    done
    echo
done
