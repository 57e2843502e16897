use std::error::Error;

use outbound_guard::{CircuitBreakerError, Guard};

/// The payment port's error.
#[derive(Debug)]
pub enum PaymentError {
    /// Sber's guard refused the call, or cut it short.
    Unavailable(CircuitBreakerError),
    /// Sber answered with an error status, or could not be reached in time.
    Http(reqwest::Error),
}

impl PaymentError {
    fn unavailable(error: CircuitBreakerError) -> Self {
        PaymentError::Unavailable(error)
    }

    /// Which errors count against Sber's breaker: 5xx, 408, 429 and transport errors
    /// (a timeout included); a 404 or a 422 is Sber answering.
    fn is_outage(&self) -> bool {
        match self {
            PaymentError::Unavailable(_) => true,
            PaymentError::Http(e) => outbound_guard_reqwest::is_transient(e),
        }
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: Guard,
    http: reqwest::Client,
    base_url: String,
}

impl SberAdapter {
    /// The adapter over `guard`, with an HTTP client built from its system's settings.
    ///
    /// # Errors
    ///
    /// If reqwest refuses the client, or the system has no `base_url`.
    pub fn new(guard: Guard) -> Result<Self, Box<dyn Error>> {
        let settings = guard.settings();
        let http = outbound_guard_reqwest::client_builder(&settings).build()?;
        let base_url = settings.base_url().ok_or("no base_url")?.to_owned();
        Ok(SberAdapter {
            guard,
            http,
            base_url,
        })
    }
}

// The block takes its system from the derive: `sber`.
#[outbound_guard::adapter(error_map = PaymentError::unavailable, failure_if = PaymentError::is_outage)]
impl SberAdapter {
    pub async fn register(&self, order_id: u64) -> Result<String, PaymentError> {
        let url = format!("{}/payments/{order_id}", self.base_url);
        let response = self.http.post(url).send().await;
        let response = response.and_then(reqwest::Response::error_for_status);
        let response = response.map_err(PaymentError::Http)?;
        response.text().await.map_err(PaymentError::Http)
    }
}
