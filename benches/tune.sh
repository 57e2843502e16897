#!/usr/bin/env bash
# `outbound-guard tune`'s cost as it grows with the recording and the settings tried:
# generated observe recordings (examples/recording.rs: three systems, every call's
# outcome recorded, per system an error burst, a hang and a slowdown) of each size in
# CALLS, tuned through benches/replay.toml with each --max-settings in SETTINGS (per
# system). Prints one line per run: calls, settings tried, wall and CPU seconds, peak
# memory. Not a timed test: run it by hand on a quiet machine, figures in RESULTS.md.
#
#   CALLS="100000 300000 1000000" SETTINGS="50 200" benches/tune.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p outbound-guard-cli -p outbound-guard-benches --example recording
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '%10s %9s %9s %9s %8s\n' calls settings wall_s cpu_s peak_mb
for calls in ${CALLS:-100000 300000 1000000}; do
  "$target/release/examples/recording" "$calls" > "$scratch/day.jsonl"
  for most in ${SETTINGS:-50 200}; do
    /usr/bin/time -f '%e %U %S %M' -o "$scratch/time" \
      "$target/release/outbound-guard" tune "$scratch/day.jsonl" \
      --settings benches/replay.toml --max-settings "$most" --json > "$scratch/out.json"
    tried=$(python3 -c 'import json, sys; print(sum(s["tried"] for s in json.load(open(sys.argv[1]))["systems"].values()))' "$scratch/out.json")
    read -r wall user sys kb < "$scratch/time"
    printf '%10s %9s %9s %9.1f %8d\n' "$calls" "$tried" "$wall" "$(echo "$user + $sys" | bc)" $((kb / 1024))
  done
done
