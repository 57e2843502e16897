//! The customer out-adapter: implements [`CustomerPort`] over the customer system's
//! HTTP API.

use outbound_guard::{Guard, SystemAdapter};

use super::{endpoint, http_client, BuildError};
use crate::core::domain::{Customer, CustomerId};
use crate::core::ports::{CustomerPort, CustomerPortError};

/// Talks to the customer system. Holds the `customer` guard: its own breaker,
/// bulkhead and client, untouched by anything Sber does (R-RES-ISO-1).
#[derive(outbound_guard::Guarded)]
#[guarded(system = "customer")]
pub struct CustomerAdapter {
    guard: outbound_guard::Guard,
    http: reqwest::Client,
    base_url: String,
}

impl CustomerAdapter {
    /// The adapter for the `customer` guard, with an HTTP client built from its
    /// settings. Another system's guard is refused here, not on the first lookup.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] if the system has no `base_url`, reqwest refuses its client, or
    /// `guard` is another system's.
    pub fn new(guard: Guard) -> Result<Self, BuildError> {
        let (http, base_url) = http_client(&guard.settings())?;
        Ok(CustomerAdapter {
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
}

#[outbound_guard::adapter(
    error_map = CustomerPortError::system_unavailable,
    failure_if = CustomerPortError::is_outage
)]
impl CustomerPort for CustomerAdapter {
    async fn get(&self, id: &CustomerId) -> Result<Customer, CustomerPortError> {
        let url =
            endpoint(&self.base_url, &["customers", &id.0]).map_err(CustomerPortError::Request)?;
        let response = self.http.get(url).send().await.map_err(transport)?;
        match response.status() {
            status if status.is_success() => response.json().await.map_err(transport),
            reqwest::StatusCode::NOT_FOUND => Err(CustomerPortError::NotFound),
            status => Err(CustomerPortError::Upstream {
                status: status.as_u16(),
            }),
        }
    }
}

fn transport(err: reqwest::Error) -> CustomerPortError {
    CustomerPortError::from_http(&err)
}
