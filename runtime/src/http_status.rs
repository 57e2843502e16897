//! Which HTTP statuses say a system is in trouble: the one rule the HTTP client
//! integrations (`outbound-guard-reqwest`, and `outbound-guard-tower`'s `TransientHttp`)
//! and a port's own `failure_if` share. Plain status codes in, so it carries no HTTP
//! crate's types.

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

#[cfg(test)]
mod tests {
    use super::is_transient;

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
