//! Which HTTP statuses say a system is in trouble, and how long it asked not to be
//! called (`Retry-After`): the one rule the HTTP client integrations
//! (`outbound-guard-reqwest`, and `outbound-guard-tower`'s `TransientHttp`) and a port's
//! own `failure_if` and `retry_after` share. Plain status codes and header bytes in, so
//! it carries no HTTP crate's types.

use std::time::{Duration, SystemTime};

/// Whether an HTTP status says the system is in trouble: any 5xx, 408 Request Timeout
/// and 429 Too Many Requests count; every other status (1xx–4xx, a 404, a 422, a 409)
/// is an answer. The status rule of Microsoft.Extensions.Http.Resilience's transient
/// predicate. Takes the code: `response.status().as_u16()`.
///
/// ```
/// use outbound_guard::http_status::is_transient;
///
/// assert!(is_transient(503));
/// assert!(is_transient(408) && is_transient(429));
/// assert!(!is_transient(404) && !is_transient(422) && !is_transient(200));
/// ```
pub fn is_transient(status: u16) -> bool {
    status >= 500 || status == 408 || status == 429
}

/// The upstream's retry hint in a response: the `Retry-After` header of a 429 Too Many
/// Requests or a 503 Service Unavailable, in seconds (`120`) or as an HTTP date (`Fri,
/// 04 Dec 2026 15:02:00 GMT`, read against the system clock). `None` for any other
/// status, no header, a date already past, or a value that is neither (`-5`, `1.5`,
/// `soon`): ignored, never a panic. A huge number of seconds is returned as it is; the
/// breaker caps what it honours by `cb_open_max`.
///
/// ```
/// use std::time::Duration;
/// use outbound_guard::http_status::retry_after;
///
/// assert_eq!(retry_after(429, Some(b"120")), Some(Duration::from_secs(120)));
/// assert_eq!(retry_after(503, Some(b" 30 ")), Some(Duration::from_secs(30)));
/// assert_eq!(retry_after(500, Some(b"120")), None);
/// assert_eq!(retry_after(429, Some(b"soon")), None);
/// ```
pub fn retry_after(status: u16, header: Option<&[u8]>) -> Option<Duration> {
    retry_after_at(status, header, SystemTime::now())
}

/// [`retry_after`], an HTTP date read against `now` (the tests' fixed clock).
fn retry_after_at(status: u16, header: Option<&[u8]>, now: SystemTime) -> Option<Duration> {
    if status != 429 && status != 503 {
        return None;
    }
    parse_retry_after(header?, now)
}

/// A `Retry-After` value, `delay-seconds` or an HTTP date, as a delay from `now`; `None`
/// for anything else or a date not after `now`.
pub fn parse_retry_after(value: &[u8], now: SystemTime) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?.trim();
    if text.is_empty() {
        return None;
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: more than u64 seconds is still "a very long time".
        let seconds = text.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(text).ok()?;
    at.duration_since(now).ok().filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use super::{is_transient, parse_retry_after, retry_after, retry_after_at};
    use std::time::{Duration, SystemTime};

    #[test]
    fn retry_after_reads_seconds_and_http_dates_of_429_and_503_only() {
        let now = httpdate::parse_http_date("Fri, 04 Dec 2026 15:00:00 GMT").unwrap();
        let at = |status, value: &str| retry_after_at(status, Some(value.as_bytes()), now);
        assert_eq!(at(429, "120"), Some(Duration::from_secs(120)));
        assert_eq!(at(503, "0"), Some(Duration::ZERO));
        assert_eq!(
            at(503, "Fri, 04 Dec 2026 15:02:00 GMT"),
            Some(Duration::from_secs(120))
        );
        // The obsolete date forms HTTP still accepts.
        assert_eq!(
            at(429, "Friday, 04-Dec-26 15:01:00 GMT"),
            Some(Duration::from_secs(60))
        );
        for status in [200, 404, 500, 502, 504, 408] {
            assert_eq!(at(status, "120"), None, "{status}");
        }
        assert_eq!(retry_after(429, None), None);
    }

    #[test]
    fn a_past_negative_unparsable_or_absurd_hint_is_ignored_or_kept_whole_never_a_panic() {
        let now = httpdate::parse_http_date("Fri, 04 Dec 2026 15:00:00 GMT").unwrap();
        for garbage in [
            "",
            " ",
            "-5",
            "1.5",
            "soon",
            "120s",
            "0x10",
            "Fri, 04 Dec 2026 14:00:00 GMT",
            "Fri, 04 Dec 2026 15:00:00 GMT",
            "Fri, 32 Dec 2026 15:00:00 GMT",
            "\u{1F600}",
        ] {
            assert_eq!(
                parse_retry_after(garbage.as_bytes(), now),
                None,
                "{garbage:?}"
            );
        }
        assert_eq!(parse_retry_after(&[0xff, 0xfe], now), None);
        assert_eq!(
            parse_retry_after(b"99999999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX)),
            "absurd, but the breaker caps it by cb_open_max"
        );
        assert_eq!(
            parse_retry_after(b"Fri, 31 Dec 9999 23:59:59 GMT", SystemTime::UNIX_EPOCH)
                .map(|d| d > Duration::from_secs(86_400 * 365 * 7000)),
            Some(true)
        );
    }

    #[test]
    fn counts_5xx_408_and_429_only() {
        for status in [500, 502, 503, 504, 599, 408, 429] {
            assert!(is_transient(status), "{status}");
        }
        for status in [
            100, 200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 407, 409, 422, 428, 430, 499,
        ] {
            assert!(!is_transient(status), "{status}");
        }
    }
}
