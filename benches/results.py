#!/usr/bin/env python3
"""Turns the output of `cargo bench -p outbound-guard-benches` into the ratio tables of
RESULTS.md: ns per call (criterion's point estimate and its confidence interval), the
ratio to the bare call of the same kind (sync subjects to `bare_sync`, async ones to
`bare_async`), and the ratio to recloser's synchronous `call`.

Usage: python3 benches/results.py /tmp/bench.txt
"""

import re
import sys

UNIT = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6}
ASYNC = {"bare_async", "ours_guard", "recloser_async", "tower_breaker"}
ORDER = [
    "bare_sync",
    "bare_async",
    "ours_breaker",
    "ours_guard",
    "recloser_sync",
    "recloser_async",
    "failsafe_sync",
    "tower_breaker",
]


def parse(path):
    """{group: {bench: (low, mid, high)}} in ns, from criterion's `time:` lines."""
    results = {}
    name = None
    for line in open(path, encoding="utf-8"):
        head = re.match(r"^([a-z0-9_]+/[a-z0-9_]+)/([a-z0-9_]+)", line)
        if head:
            name = (head.group(1), head.group(2))
        time = re.search(r"time:\s+\[([\d.]+) (\S+) ([\d.]+) (\S+) ([\d.]+) (\S+)\]", line)
        if time and name:
            values = [float(time.group(i)) * UNIT[time.group(i + 1)] for i in (1, 3, 5)]
            results.setdefault(name[0], {})[name[1]] = tuple(values)
            name = None
    return results


def table(group, rows):
    out = [
        f"### `{group}`",
        "",
        "| subject | ns/call [95% CI] | × bare call | × recloser (sync) |",
        "|---|---:|---:|---:|",
    ]
    recloser = rows["recloser_sync"][1]
    for bench in ORDER:
        if bench not in rows:
            continue
        low, mid, high = rows[bench]
        bare = rows["bare_async" if bench in ASYNC else "bare_sync"][1]
        out.append(
            f"| {bench} | {mid:.1f} [{low:.1f}–{high:.1f}] | {mid / bare:.1f} | {mid / recloser:.2f} |"
        )
    return "\n".join(out)


def main():
    results = parse(sys.argv[1] if len(sys.argv) > 1 else "/tmp/bench.txt")
    for group in sorted(results, key=lambda g: (g.split("/")[0] != "all_ok", g)):
        print(table(group, results[group]))
        print()


if __name__ == "__main__":
    main()
