#!/bin/sh
# Compile cost of the attribute: the time 100 guarded methods add to a crate, with
# incremental compilation off, for a debug build and for `cargo check`.
#
# Three generated crates under $TARGET/compile-cost/, each with one adapter of 100 async
# methods, all driven from one public function (so every future's body is compiled):
#   plain   no attribute
#   method  `#[circuit_breaker(...)]` on each method
#   block   one `#[outbound_guard::adapter(...)]` on the impl block
# Dependencies are built once first; each measurement then rebuilds the generated crate
# alone (its `lib.rs` touched), RUNS times, and keeps the least CPU time (user + system,
# from /usr/bin/time: steadier than wall time on a shared machine).
#
# Usage: sh benches/compile_cost.sh   (from the workspace root)
set -eu
METHODS=${METHODS:-100}
RUNS=${RUNS:-3}
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/compile-cost
mkdir -p "$work"

generate() { # kind
    dir=$work/$1
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<TOML
[package]
name = "compile-cost-$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
outbound-guard = { path = "$root/runtime", default-features = false }

[workspace]
TOML
    cp "$root/Cargo.lock" "$dir/Cargo.lock"
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
        [ "$1" = block ] && echo '#[guarded(system = "sber")]'
        cat <<'RS'
pub struct Adapter {
    guard: outbound_guard::Guard,
}
RS
        [ "$1" = block ] && echo '#[outbound_guard::adapter(system = "sber", error_map = PortError::unavailable, failure_if = PortError::is_outage)]'
        echo 'impl Adapter {'
        i=0
        while [ $i -lt "$METHODS" ]; do
            [ "$1" = method ] && echo '    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable, failure_if = PortError::is_outage)]'
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

measure() { # kind command
    dir=$work/$1
    CARGO_INCREMENTAL=0 cargo $2 --quiet --offline --manifest-path "$dir/Cargo.toml" --target-dir "$work/target" 2>/dev/null || true
    best=
    n=0
    while [ $n -lt "$RUNS" ]; do
        touch "$dir/src/lib.rs"
        # CPU time (user + system) of cargo and the rustc it runs: steadier than wall
        # time on a shared machine.
        /usr/bin/time -o "$work/time" -f '%U %S' env CARGO_INCREMENTAL=0 cargo $2 --quiet \
            --offline --manifest-path "$dir/Cargo.toml" --target-dir "$work/target" 2>/dev/null
        t=$(tail -1 "$work/time" | awk '{ print $1 + $2 }')
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
        n=$((n + 1))
    done
    echo "$best"
}

for kind in plain method block; do generate $kind; done
for command in build check; do
    plain=$(measure plain $command)
    method=$(measure method $command)
    block=$(measure block $command)
    printf 'cargo %s, %s methods, CPU time: plain %.2f s, #[circuit_breaker] each %.2f s (+%.2f s), #[adapter] block %.2f s (+%.2f s)\n' \
        "$command" "$METHODS" "$plain" "$method" "$(echo "$method - $plain" | bc)" "$block" "$(echo "$block - $plain" | bc)"
done
