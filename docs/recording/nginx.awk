# nginx's access log → outbound-guard's recording (one JSON line a call).
#
# With this log format in nginx (http block), one line per proxied request:
#   log_format guard '$msec $upstream_response_time $upstream_status $request_time';
# $msec is when the line was logged (the request's end), in seconds with milliseconds;
# $upstream_response_time the upstream's time in seconds ("-" if none was reached).
#
#   awk -v name=sber -f nginx.awk access.log > calls.jsonl
#
# 5xx, 408 and 429 count as failures (the runtime's http_status::is_transient), 504 as
# a timeout, a request that never reached an upstream ("-") as a failure.
{
    took = ($2 == "-") ? $4 : $2
    # Several upstreams tried ("0.010, 0.020"): the log has them comma-separated.
    gsub(/,/, "", took)
    d = took * 1000
    status = $3
    outcome = "success"
    if (status == "504") outcome = "timeout"
    else if (status == "-" || status ~ /^5/ || status == "408" || status == "429") outcome = "failure"
    printf "{\"system\":\"%s\",\"start\":%.3f,\"duration_ms\":%.3f,\"outcome\":\"%s\"}\n", name, $1 * 1000 - d, d, outcome
}
