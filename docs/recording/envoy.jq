# Envoy's JSON access log → outbound-guard's recording (one JSON line a call).
#
# With this json_format on the listener's or the router's access log:
#   start_time: "%START_TIME%"          duration: "%DURATION%"
#   response_code: "%RESPONSE_CODE%"    response_flags: "%RESPONSE_FLAGS%"
#   upstream_cluster: "%UPSTREAM_CLUSTER%"
#
#   jq -c -f envoy.jq access.log > calls.jsonl
#
# The cluster is the system. Envoy's own refusals (UO: its circuit breaker overflowed)
# are refusals; UT (the route's timeout) a timeout; 5xx, 408, 429 and no response
# (code 0: reset, connection failure) failures.
def flags: (.response_flags // "-");
{
  system: .upstream_cluster,
  start: .start_time,
  duration_ms: (.duration | tonumber),
  outcome: (
    if (flags | test("UO")) then "rejected"
    elif (flags | test("UT")) then "timeout"
    elif ((.response_code | tonumber) as $c | $c == 0 or $c >= 500 or $c == 408 or $c == 429) then "failure"
    else "success" end)
}
| if .outcome == "rejected" then . + {cause: "bulkhead_full"} else . end
