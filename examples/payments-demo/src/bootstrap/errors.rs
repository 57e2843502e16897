//! From port errors to HTTP answers (the guide's `bootstrap/exception_handlers.py`).
//!
//! The adapters turn a breaker's refusal into their port's `SystemUnavailable`
//! (R-RES-CB-6); here it becomes the status `CircuitBreakerError::http_status` gives
//! (**503** for a refusal, **504** for a call the guard cut short) with its `Retry-After`
//! and a JSON body — or, on the order-creation path, where the business allows "created
//! but not paid", **409** with the created order. A hung call that the HTTP client's
//! `read_timeout` ended is the port's own transport error, answered **502** like every
//! other failure of the upstream.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::core::domain::{InvalidCustomerId, Order, OrderId};
use crate::core::orders::ConfirmError;
use crate::core::ports::{CustomerPortError, PaymentPortError, Unavailable};

/// An error the HTTP API answers with.
#[derive(Debug)]
pub enum ApiError {
    /// The payment port failed.
    Payment(PaymentPortError),
    /// The customer port failed.
    Customer(CustomerPortError),
    /// No such order.
    OrderNotFound(OrderId),
    /// A customer id that cannot be one: 400, before any call.
    InvalidCustomerId,
    /// The order was created, but its payment could not be registered: 409.
    CreatedNotPaid {
        /// The order, status `created`.
        order: Order,
        /// Why it is not paid.
        error: PaymentPortError,
    },
}

impl From<ConfirmError> for ApiError {
    fn from(err: ConfirmError) -> Self {
        match err {
            ConfirmError::NotFound(id) => ApiError::OrderNotFound(id),
            ConfirmError::Payment(err) => ApiError::Payment(err),
        }
    }
}

impl From<CustomerPortError> for ApiError {
    fn from(err: CustomerPortError) -> Self {
        ApiError::Customer(err)
    }
}

/// The `Retry-After` seconds for an unavailable system: the guard's answer for its
/// cause (the time the breaker stays open, the bulkhead's wait, …), whole seconds and at
/// least 1 s.
pub fn retry_after_secs(unavailable: &Unavailable) -> u64 {
    unavailable.retry_after.as_secs()
}

/// The status for an unavailable system: 503 for a refusal, 504 for a call the guard
/// cut short.
fn unavailable_status(unavailable: &Unavailable) -> StatusCode {
    StatusCode::from_u16(unavailable.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
}

fn unavailable_body(u: &Unavailable, what: &str) -> Value {
    json!({
        "error": "system_unavailable",
        "system": u.system,
        "reason": u.reason,
        "retry_after_secs": retry_after_secs(u),
        "detail": format!("{what} '{}' is temporarily unavailable, try again later", u.system),
    })
}

fn payment_body(err: &PaymentPortError) -> (StatusCode, Value) {
    match err {
        PaymentPortError::SystemUnavailable(u) => {
            (unavailable_status(u), unavailable_body(u, "payment system"))
        }
        PaymentPortError::Declined(reason) => (
            StatusCode::PAYMENT_REQUIRED,
            json!({ "error": "payment_declined", "detail": reason }),
        ),
        other => {
            // The error's text names internal URLs: the log gets it, the client a
            // generic answer.
            tracing::warn!(error = %other, "payment system error");
            (
                StatusCode::BAD_GATEWAY,
                json!({
                    "error": "payment_system_error",
                    "detail": "the payment system could not be asked or did not answer as expected",
                }),
            )
        }
    }
}

fn with_retry_after(mut response: Response, unavailable: Option<&Unavailable>) -> Response {
    if let Some(u) = unavailable {
        let value = HeaderValue::from(retry_after_secs(u));
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Payment(err) => {
                let (status, body) = payment_body(&err);
                let unavailable = match &err {
                    PaymentPortError::SystemUnavailable(u) => Some(u),
                    _ => None,
                };
                with_retry_after((status, Json(body)).into_response(), unavailable)
            }
            ApiError::Customer(err) => {
                let (status, body, unavailable) = match &err {
                    CustomerPortError::SystemUnavailable(u) => (
                        unavailable_status(u),
                        unavailable_body(u, "customer system"),
                        Some(u),
                    ),
                    CustomerPortError::NotFound => (
                        StatusCode::NOT_FOUND,
                        json!({ "error": "customer_not_found" }),
                        None,
                    ),
                    other => {
                        tracing::warn!(error = %other, "customer system error");
                        (
                            StatusCode::BAD_GATEWAY,
                            json!({
                                "error": "customer_system_error",
                                "detail": "the customer system could not be asked or did not answer as expected",
                            }),
                            None,
                        )
                    }
                };
                with_retry_after((status, Json(body)).into_response(), unavailable)
            }
            ApiError::InvalidCustomerId => (
                StatusCode::BAD_REQUEST,
                Json(json!({
                    "error": "invalid_customer_id",
                    "detail": InvalidCustomerId.to_string(),
                })),
            )
                .into_response(),
            ApiError::OrderNotFound(id) => (
                StatusCode::NOT_FOUND,
                Json(json!({ "error": "order_not_found", "order_id": id })),
            )
                .into_response(),
            ApiError::CreatedNotPaid { order, error } => {
                let (_, payment_error) = payment_body(&error);
                let unavailable = match &error {
                    PaymentPortError::SystemUnavailable(u) => Some(u),
                    _ => None,
                };
                let body = json!({
                    "error": "created_not_paid",
                    "detail": "the order was created but not paid; confirming it retries the payment",
                    "order": order,
                    "payment_error": payment_error,
                });
                with_retry_after(
                    (StatusCode::CONFLICT, Json(body)).into_response(),
                    unavailable,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use outbound_guard::{Cause, CircuitBreakerError};

    use super::*;

    fn unavailable(cause: Cause) -> Unavailable {
        let err = CircuitBreakerError::from_cause("sber", cause);
        match PaymentPortError::system_unavailable(err) {
            PaymentPortError::SystemUnavailable(u) => u,
            other => panic!("{other:?}"),
        }
    }

    fn open(retry_after: Duration) -> Unavailable {
        unavailable(Cause::Open { retry_after })
    }

    #[test]
    fn retry_after_is_rounded_up_and_at_least_one_second() {
        assert_eq!(retry_after_secs(&open(Duration::from_millis(2100))), 3);
        assert_eq!(retry_after_secs(&open(Duration::from_millis(10))), 1);
        assert_eq!(retry_after_secs(&open(Duration::ZERO)), 1);
        let full = unavailable(Cause::BulkheadFull {
            permits: 8,
            waited: Duration::from_millis(1500),
        });
        assert_eq!(retry_after_secs(&full), 2);
    }

    #[test]
    fn a_call_the_guard_cut_short_is_504() {
        let timeout = unavailable(Cause::Timeout {
            timeout: Duration::from_secs(35),
        });
        let response =
            ApiError::Payment(PaymentPortError::SystemUnavailable(timeout)).into_response();
        assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
    }

    #[test]
    fn unavailable_payment_is_503_with_retry_after() {
        let err = PaymentPortError::SystemUnavailable(open(Duration::from_secs(30)));
        let response = ApiError::Payment(err).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "30");
    }
}
