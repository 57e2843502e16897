#!/usr/bin/env bash
# Checks the shipped Prometheus rules and Grafana dashboard with promtool (Debian's
# `prometheus` package): the rules' syntax, their unit tests, and every dashboard query
# (its variables filled in) as PromQL. Run from anywhere: `bash ops/check.sh`.
set -euo pipefail
cd "$(dirname "$0")"
promtool check rules prometheus/rules.yml
promtool test rules prometheus/rules.test.yml
queries=$(mktemp --suffix=.yml)
trap 'rm -f "$queries"' EXIT
python3 - grafana/outbound-guard.json > "$queries" <<'PY'
import json, sys
dashboard = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
assert exprs, "the dashboard has no queries"
print("groups:\n  - name: dashboard\n    rules:")
for i, expr in enumerate(exprs):
    expr = (expr.replace("$__rate_interval", "5m")
                .replace("$system", "sber")
                .replace("$job", ".*"))
    print(f"      - record: dashboard:query_{i}\n        expr: {json.dumps(expr)}")
PY
echo "dashboard queries:"
promtool check rules "$queries"
