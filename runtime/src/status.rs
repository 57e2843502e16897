//! The one rule for which HTTP answers count against the breaker, shared by the
//! `reqwest` helpers and the tower classifier.

/// 5xx, 408 (request timeout) and 429 (too many requests): the system failing or
/// overloaded. Any other status is an answer.
pub(crate) fn is_transient(status: u16) -> bool {
    status >= 500 || status == 408 || status == 429
}
