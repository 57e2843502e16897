# nginx's access log → outbound-guard's recording (one JSON line a call).
#
# With this log format in nginx (http block), one line per proxied request:
#   log_format guard '$msec $upstream_response_time $upstream_status $request_time $status';
# $msec is when the line was logged (the request's end), in seconds with milliseconds;
# $upstream_response_time and $upstream_status have one entry per upstream tried
# ("1.000, 2.000" and "502, 504" when a request was retried; "-" when none was
# reached); $status is what the client got (499: the client gave up and closed).
# Lines of the older format without $status are read too.
#
#   awk -v name=sber -f nginx.awk access.log > calls.jsonl
#
# A call's duration is the whole time its upstreams took (every try, added up), or
# $request_time when none was reached; its outcome is the last upstream's status:
# 5xx, 408 and 429 are failures (the runtime's http_status::is_transient; a 504 is an
# answer the client got, so a failure too), other statuses successes. A request the
# client gave up on ($status 499) is a timeout at its $request_time: the upstream had
# not answered by then. A request that reached no upstream is classified by $status,
# or is a failure without it.
{
    line = $0
    # nginx separates the upstreams tried with ", " and internal redirects with " : ".
    gsub(/, /, ",", line)
    gsub(/ : /, ",", line)
    n = split(line, f, " ")
    if (n < 4) {
        printf "nginx.awk: line %d: expected $msec $upstream_response_time $upstream_status $request_time $status, got: %s\n", NR, $0 > "/dev/stderr"
        next
    }
    status = (n >= 5) ? f[5] : ""
    took = 0
    reached = 0
    tries = split(f[2], times, ",")
    for (i = 1; i <= tries; i++) {
        if (times[i] != "-" && times[i] != "") {
            took += times[i]
            reached = 1
        }
    }
    tried = split(f[3], statuses, ",")
    code = statuses[tried]
    if (code == "-" || code == "") code = status
    if (status == "499") {
        outcome = "timeout"
        took = f[4]
    } else {
        if (!reached) took = f[4]
        if (code == "" || code == "-" || code ~ /^5/ || code == "408" || code == "429") outcome = "failure"
        else outcome = "success"
    }
    d = took * 1000
    printf "{\"system\":\"%s\",\"start\":%.3f,\"duration_ms\":%.3f,\"outcome\":\"%s\"}\n", name, f[1] * 1000 - d, d, outcome
}
