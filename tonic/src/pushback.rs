//! The upstream's retry hint in a gRPC answer: `grpc-retry-pushback-ms` (gRPC's A6
//! design), in the response headers of a trailers-only answer or in the trailers; a
//! proxy's HTTP 429 or 503 with `Retry-After` as well.

use std::time::Duration;

/// The server's pushback: `grpc-retry-pushback-ms` as a whole number of milliseconds.
/// A negative or malformed value (A6's "do not retry") is no hint, never a panic.
///
/// ```
/// use std::time::Duration;
///
/// let mut trailers = http::HeaderMap::new();
/// trailers.insert("grpc-retry-pushback-ms", "120000".parse().unwrap());
/// assert_eq!(
///     outbound_guard_tonic::retry_pushback(&trailers),
///     Some(Duration::from_secs(120))
/// );
/// trailers.insert("grpc-retry-pushback-ms", "-1".parse().unwrap());
/// assert_eq!(outbound_guard_tonic::retry_pushback(&trailers), None);
/// ```
pub fn retry_pushback(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get("grpc-retry-pushback-ms")?.to_str().ok()?.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Duration::from_millis(value.parse().unwrap_or(u64::MAX)))
}

/// The hint an answer's headers carry: the gRPC pushback, or a proxy's `Retry-After`
/// on an HTTP 429 or 503.
pub(crate) fn hint_of<B>(response: &http::Response<B>) -> Option<Duration> {
    retry_pushback(response.headers()).or_else(|| {
        let header = response.headers().get(http::header::RETRY_AFTER);
        outbound_guard::http_status::retry_after(
            response.status().as_u16(),
            header.map(http::HeaderValue::as_bytes),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{hint_of, retry_pushback};

    #[test]
    fn pushback_is_whole_milliseconds_and_anything_else_is_no_hint() {
        let of = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert("grpc-retry-pushback-ms", value.parse().unwrap());
            retry_pushback(&headers)
        };
        assert_eq!(of("1500"), Some(Duration::from_millis(1500)));
        assert_eq!(of("0"), Some(Duration::ZERO));
        assert_eq!(
            of("99999999999999999999999"),
            Some(Duration::from_millis(u64::MAX))
        );
        for garbage in ["-1", "1.5", "", "soon", "0x10"] {
            assert_eq!(of(garbage), None, "{garbage:?}");
        }
        assert_eq!(retry_pushback(&http::HeaderMap::new()), None);
    }

    #[test]
    fn a_proxys_429_or_503_gives_its_retry_after() {
        let answer = |status: u16| {
            http::Response::builder()
                .status(status)
                .header("retry-after", "30")
                .body(())
                .unwrap()
        };
        assert_eq!(hint_of(&answer(429)), Some(Duration::from_secs(30)));
        assert_eq!(hint_of(&answer(503)), Some(Duration::from_secs(30)));
        assert_eq!(hint_of(&answer(502)), None);
    }
}
