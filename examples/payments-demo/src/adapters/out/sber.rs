//! The Sber out-adapter: implements [`PaymentPort`] over Sber's HTTP API.

use outbound_guard::{Guard, SystemAdapter};
use serde::{Deserialize, Serialize};

use super::{endpoint, http_client, BuildError};
use crate::core::domain::{Order, PaymentRef};
use crate::core::ports::{PaymentPort, PaymentPortError};

/// Talks to Sber. Holds the `sber` guard: every method of its [`PaymentPort`] impl goes
/// through the guard's bulkhead, breaker, total timeout and slow-call check, and a
/// method added there later cannot skip it (`#[outbound_guard::adapter]`).
#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
    http: reqwest::Client,
    base_url: String,
}

#[derive(Serialize)]
struct RegisterRequest {
    order_id: u64,
    amount: u64,
}

#[derive(Deserialize)]
struct RegisterResponse {
    payment_id: String,
}

#[derive(Deserialize)]
struct DeclineResponse {
    reason: String,
}

impl SberAdapter {
    /// The adapter for the `sber` guard, with an HTTP client built from its settings.
    /// Another system's guard is refused here, not on the first payment.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] if the system has no `base_url`, reqwest refuses its client, or
    /// `guard` is another system's.
    pub fn new(guard: Guard) -> Result<Self, BuildError> {
        let (http, base_url) = http_client(&guard.settings())?;
        Ok(SberAdapter {
            guard,
            http,
            base_url,
        }
        .wired()?)
    }

    /// The adapter's guard, for health and state readings.
    pub fn system_guard(&self) -> &Guard {
        &self.guard
    }

    /// The URL of `segments` under Sber's base URL, each encoded as one segment.
    fn url(&self, segments: &[&str]) -> Result<reqwest::Url, PaymentPortError> {
        endpoint(&self.base_url, segments).map_err(PaymentPortError::Request)
    }
}

#[outbound_guard::adapter(
    error_map = PaymentPortError::system_unavailable,
    failure_if = PaymentPortError::is_outage
)]
impl PaymentPort for SberAdapter {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        let request = RegisterRequest {
            order_id: order.id.0,
            amount: order.amount,
        };
        let response = self
            .http
            .post(self.url(&["payments"])?)
            .json(&request)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status();
        if status.is_success() {
            let body: RegisterResponse = response.json().await.map_err(transport)?;
            return Ok(PaymentRef(body.payment_id));
        }
        if status == reqwest::StatusCode::PAYMENT_REQUIRED {
            let body: DeclineResponse = response.json().await.map_err(transport)?;
            return Err(PaymentPortError::Declined(body.reason));
        }
        Err(PaymentPortError::Upstream {
            status: status.as_u16(),
        })
    }

    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
        let url = self.url(&["payments", &payment.0, "confirm"])?;
        let response = self.http.post(url).send().await.map_err(transport)?;
        match response.status() {
            status if status.is_success() => Ok(()),
            reqwest::StatusCode::NOT_FOUND => Err(PaymentPortError::NotFound),
            status => Err(PaymentPortError::Upstream {
                status: status.as_u16(),
            }),
        }
    }
}

fn transport(err: reqwest::Error) -> PaymentPortError {
    PaymentPortError::from_http(&err)
}
