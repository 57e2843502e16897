#!/bin/sh
# Compile cost of the attribute: the time 100 guarded methods add to a crate, with
# incremental compilation off, for a debug build and for `cargo check`.
#
# Three generated crates under $TARGET/compile-cost/, each with one adapter of 100 async
# methods, all driven from one public function (so every future's body is compiled):
#   plain   no attribute
#   method  `#[circuit_breaker(...)]` on each method
#   block   one `#[outbound_guard::adapter(...)]` on the impl block
# With BASE=DIR (the root of another checkout, such as `git archive main | tar -x -C DIR`),
# `method` and `block` are also built against DIR's runtime, as `method-base` and
# `block-base`: two versions compared in one run.
# Dependencies are built once first; then each run rebuilds every generated crate alone
# (its `lib.rs` touched), one after the other, RUNS times: interleaved, so that a load
# that comes and goes on a shared machine falls on every crate alike. Each crate's CPU
# time (user + system of cargo and its rustc, from /usr/bin/time: steadier than wall
# time) is the least of its runs, its spread the greatest.
#
# Usage: sh benches/compile_cost.sh   (from the workspace root)
set -eu
METHODS=${METHODS:-100}
RUNS=${RUNS:-3}
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/compile-cost
mkdir -p "$work"

generate() { # kind form root: crate `kind`, in `form`, against the runtime of `root`
    dir=$work/$1
    form=$2
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<TOML
[package]
name = "compile-cost-$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
outbound-guard = { path = "$3/runtime", default-features = false }

[workspace]
TOML
    cp "$3/Cargo.lock" "$dir/Cargo.lock"
    printf '[systems.sber]\n' > "$dir/resilience.toml"
    {
        cat <<'RS'
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
    fn is_outage(&self) -> bool {
        true
    }
}

RS
        echo '#[derive(outbound_guard::Guarded)]'
        # A block checks its system against the one the derive declares.
        [ "$form" = block ] && echo '#[guarded(system = "sber")]'
        cat <<'RS'
pub struct Adapter {
    guard: outbound_guard::Guard,
}
RS
        [ "$form" = block ] && echo '#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable, failure_if = PortError::is_outage)]'
        echo 'impl Adapter {'
        i=0
        while [ $i -lt "$METHODS" ]; do
            [ "$form" = method ] && echo '    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable, failure_if = PortError::is_outage)]'
            echo "    pub async fn m$i(&self, x: u64) -> Result<u64, PortError> {"
            echo "        if x == $i { return Err(PortError); }"
            echo "        Ok(x + $i)"
            echo '    }'
            i=$((i + 1))
        done
        echo '}'
        echo
        echo '/// Polls every method once, so each future is compiled.'
        echo 'pub fn drive(adapter: &Adapter) -> u64 {'
        echo '    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());'
        echo '    let mut sum = 0;'
        i=0
        while [ $i -lt "$METHODS" ]; do
            echo "    if let std::task::Poll::Ready(Ok(v)) = std::pin::pin!(adapter.m$i(1)).as_mut().poll(&mut cx) { sum += v; }"
            i=$((i + 1))
        done
        echo '    sum'
        echo '}'
        echo 'use std::future::Future as _;'
    } > "$dir/src/lib.rs"
}

kinds="plain method block"
generate plain plain "$root"
generate method method "$root"
generate block block "$root"
if [ -n "${BASE:-}" ]; then
    base=$(cd "$BASE" && pwd)
    kinds="$kinds method-base block-base"
    generate method-base method "$base"
    generate block-base block "$base"
fi

build() { # kind command
    CARGO_INCREMENTAL=0 cargo $2 --quiet --offline --manifest-path "$work/$1/Cargo.toml" \
        --target-dir "$work/target" 2>/dev/null
}

for command in build check; do
    for kind in $kinds; do build "$kind" "$command" || true; done
    rm -f "$work"/*.times
    n=0
    while [ $n -lt "$RUNS" ]; do
        for kind in $kinds; do
            touch "$work/$kind/src/lib.rs"
            /usr/bin/time -o "$work/time" -f '%U %S' env CARGO_INCREMENTAL=0 cargo "$command" \
                --quiet --offline --manifest-path "$work/$kind/Cargo.toml" \
                --target-dir "$work/target" 2>/dev/null ||
                { echo "compile-cost-$kind does not $command" >&2; exit 1; }
            tail -1 "$work/time" | awk '{ print $1 + $2 }' >> "$work/$kind.times"
        done
        n=$((n + 1))
    done
    # The least and the greatest CPU time of each crate.
    least() { sort -n "$work/$1.times" | head -1; }
    most() { sort -n "$work/$1.times" | tail -1; }
    plain=$(least plain)
    printf 'cargo %s, %s methods, %s interleaved runs, CPU s, least (spread), added to plain:\n' \
        "$command" "$METHODS" "$RUNS"
    for kind in $kinds; do
        t=$(least "$kind")
        printf '  %-12s %.2f (%.2f-%.2f)  +%.2f\n' "$kind" "$t" "$t" "$(most "$kind")" \
            "$(echo "$t - $plain" | bc)"
    done
done
