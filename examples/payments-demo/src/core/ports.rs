//! The ports: what the core needs from the outside world, and the errors it understands.
//!
//! Each outbound port has its own error with a `SystemUnavailable` variant, built by
//! `system_unavailable(CircuitBreakerError)`: the adapter maps the breaker's error into
//! it (R-RES-CB-6), the inbound side maps it to HTTP 503 (or 409 where the business
//! allows "created but not paid"). The raw breaker error never reaches the core.

use std::future::Future;
use std::time::Duration;

use outbound_guard::http_status::is_transient as is_transient_status;
use outbound_guard::settings::mask_url;
use outbound_guard::CircuitBreakerError;
use outbound_guard_reqwest::is_transient;

use super::domain::{Customer, CustomerId, Order, OrderId, PaymentRef};

/// A reqwest error's text for the log, with the credentials of the URL it names
/// (a password, query values from `base_url`) masked as `***`.
fn http_error_text(err: &reqwest::Error) -> String {
    let text = err.to_string();
    match err.url() {
        Some(url) => text.replace(url.as_str(), &mask_url(url.as_str())),
        None => text,
    }
}

/// A system refused or cut short by its guard: breaker open, half-open trials taken,
/// bulkhead full, or the total timeout elapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The system: `sber`.
    pub system: String,
    /// Why, in `snake_case`: `open`, `half_open_full`, `bulkhead_full`, `timeout`, …
    pub reason: &'static str,
    /// Why, in words.
    pub detail: String,
    /// The HTTP status to answer: 503 for a refusal, 504 for a call the guard cut short
    /// (`CircuitBreakerError::http_status`).
    pub status: u16,
    /// The `Retry-After` to send, in whole seconds, at least 1 s, for every cause
    /// (`CircuitBreakerError::http_retry_after`).
    pub retry_after: Duration,
}

impl Unavailable {
    fn from_breaker(err: &CircuitBreakerError) -> Self {
        Unavailable {
            system: err.system().to_owned(),
            reason: err.cause().as_str(),
            detail: err.to_string(),
            status: err.http_status(),
            retry_after: err.http_retry_after(),
        }
    }
}

/// The payment port's errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaymentPortError {
    /// The payment system is unavailable: its guard refused the call or cut it short.
    #[error("payment system '{}' is unavailable: {}", .0.system, .0.detail)]
    SystemUnavailable(Unavailable),
    /// The payment system answered with a status the adapter does not expect: 5xx, 408
    /// and 429 count against its breaker, any other is an answer.
    #[error("payment system answered {status}")]
    Upstream {
        /// The HTTP status.
        status: u16,
    },
    /// The payment system could not be reached, timed out, or the connection broke:
    /// an outage.
    #[error("payment system transport error: {0}")]
    Transport(String),
    /// The request could not be made (a bad URL, a body that does not serialise) or a
    /// whole answer could not be read (a body that does not parse): this side's
    /// mistake or a contract mismatch, not an outage.
    #[error("payment system request error: {0}")]
    Request(String),
    /// The payment system declined the payment: a correct answer, not an outage.
    #[error("payment declined: {0}")]
    Declined(String),
    /// The payment system does not know the payment.
    #[error("payment not found")]
    NotFound,
}

impl PaymentPortError {
    /// The `error_map` of the Sber adapter's methods: the breaker's error as this
    /// port's `SystemUnavailable`.
    pub fn system_unavailable(err: CircuitBreakerError) -> Self {
        PaymentPortError::SystemUnavailable(Unavailable::from_breaker(&err))
    }

    /// A reqwest error as this port's: [`Transport`](Self::Transport) when
    /// [`outbound_guard_reqwest::is_transient`] says the system is in trouble,
    /// [`Request`](Self::Request) otherwise. The text (with the URL, credentials
    /// masked) is for the log.
    pub fn from_http(err: &reqwest::Error) -> Self {
        if is_transient(err) {
            PaymentPortError::Transport(http_error_text(err))
        } else {
            PaymentPortError::Request(http_error_text(err))
        }
    }

    /// The `failure_if` predicate: whether this error says the payment system is in
    /// trouble (counts against its breaker), by the transient classification of
    /// `outbound_guard_reqwest` and `outbound_guard::http_status`. A declined payment, an
    /// unknown one, a 4xx other than 408 and 429, a request this side could not make are
    /// the system working correctly.
    pub fn is_outage(&self) -> bool {
        match self {
            PaymentPortError::SystemUnavailable(_) | PaymentPortError::Transport(_) => true,
            PaymentPortError::Upstream { status } => is_transient_status(*status),
            PaymentPortError::Request(_)
            | PaymentPortError::Declined(_)
            | PaymentPortError::NotFound => false,
        }
    }
}

/// The customer port's errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CustomerPortError {
    /// The customer system is unavailable: its guard refused the call or cut it short.
    #[error("customer system '{}' is unavailable: {}", .0.system, .0.detail)]
    SystemUnavailable(Unavailable),
    /// No such customer: a correct answer, not an outage.
    #[error("no such customer")]
    NotFound,
    /// The customer system answered with a status the adapter does not expect: 5xx,
    /// 408 and 429 count against its breaker, any other is an answer.
    #[error("customer system answered {status}")]
    Upstream {
        /// The HTTP status.
        status: u16,
    },
    /// The customer system could not be reached, timed out, or the connection broke:
    /// an outage.
    #[error("customer system transport error: {0}")]
    Transport(String),
    /// The request could not be made or a whole answer could not be read: this side's
    /// mistake or a contract mismatch, not an outage.
    #[error("customer system request error: {0}")]
    Request(String),
}

impl CustomerPortError {
    /// The `error_map` of the customer adapter's methods.
    pub fn system_unavailable(err: CircuitBreakerError) -> Self {
        CustomerPortError::SystemUnavailable(Unavailable::from_breaker(&err))
    }

    /// A reqwest error as this port's: [`Transport`](Self::Transport) when
    /// [`outbound_guard_reqwest::is_transient`] says the system is in trouble,
    /// [`Request`](Self::Request) otherwise.
    pub fn from_http(err: &reqwest::Error) -> Self {
        if is_transient(err) {
            CustomerPortError::Transport(http_error_text(err))
        } else {
            CustomerPortError::Request(http_error_text(err))
        }
    }

    /// The `failure_if` predicate, by the transient classification of
    /// `outbound_guard_reqwest` and `outbound_guard::http_status`: an unknown customer, a 4xx other than 408 and 429, a
    /// request this side could not make are not an outage.
    pub fn is_outage(&self) -> bool {
        match self {
            CustomerPortError::SystemUnavailable(_) | CustomerPortError::Transport(_) => true,
            CustomerPortError::Upstream { status } => is_transient_status(*status),
            CustomerPortError::Request(_) | CustomerPortError::NotFound => false,
        }
    }
}

/// The payment system, as the core needs it. Implemented by
/// [`SberAdapter`](crate::adapters::out::sber::SberAdapter).
pub trait PaymentPort: Send + Sync + 'static {
    /// Registers a payment for `order`.
    fn register(
        &self,
        order: &Order,
    ) -> impl Future<Output = Result<PaymentRef, PaymentPortError>> + Send;

    /// Confirms (captures) a registered payment.
    fn confirm(
        &self,
        payment: &PaymentRef,
    ) -> impl Future<Output = Result<(), PaymentPortError>> + Send;
}

/// The customer directory, as the core needs it. Implemented by
/// [`CustomerAdapter`](crate::adapters::out::customer::CustomerAdapter).
pub trait CustomerPort: Send + Sync + 'static {
    /// Looks a customer up.
    fn get(
        &self,
        id: &CustomerId,
    ) -> impl Future<Output = Result<Customer, CustomerPortError>> + Send;
}

/// Where orders are kept. A local store: no breaker on it (R-RES-CB-X1).
pub trait OrderRepository: Send + Sync + 'static {
    /// Stores a new order, giving it an id.
    fn insert(&self, customer_id: CustomerId, amount: u64) -> Order;
    /// Reads an order.
    fn get(&self, id: OrderId) -> Option<Order>;
    /// Replaces an order.
    fn update(&self, order: &Order);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_transport_error_logs_its_url_without_credentials() {
        // Nothing listens on port 1 of the loopback: the request fails at once.
        let err = reqwest::Client::new()
            .get("http://svc-user:hunter2@127.0.0.1:1/api?token=t0k3n")
            .send()
            .await
            .unwrap_err();
        assert!(err.url().is_some(), "the error names its URL");
        for text in [
            PaymentPortError::from_http(&err).to_string(),
            CustomerPortError::from_http(&err).to_string(),
        ] {
            assert!(
                !text.contains("hunter2") && !text.contains("t0k3n"),
                "{text}"
            );
            assert!(text.contains("127.0.0.1:1/api?token=***"), "{text}");
        }
    }
}
