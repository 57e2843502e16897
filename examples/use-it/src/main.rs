use std::error::Error;

use outbound_guard::{CircuitBreakerError, Guard, Guards};

/// The payment port's error: the adapter's own, never a raw breaker error (R-RES-CB-6).
#[derive(Debug)]
pub enum PaymentError {
    Unavailable(CircuitBreakerError),
    Http(reqwest::Error),
}

impl PaymentError {
    fn unavailable(error: CircuitBreakerError) -> Self {
        PaymentError::Unavailable(error)
    }
}

/// One adapter per external system, holding that system's guard and HTTP client.
#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: Guard,
    http: reqwest::Client,
    base_url: String,
}

impl SberAdapter {
    pub fn new(guard: Guard) -> Result<Self, Box<dyn Error>> {
        let settings = guard.settings();
        // connect_timeout, read_timeout and the keep-alive pool from the settings.
        let http = outbound_guard_reqwest::client_builder(&settings).build()?;
        let base_url = settings
            .base_url()
            .ok_or("sber has no base_url")?
            .to_owned();
        Ok(SberAdapter {
            guard,
            http,
            base_url,
        })
    }
}

#[outbound_guard::adapter(error_map = PaymentError::unavailable)]
impl SberAdapter {
    pub async fn register(&self, order_id: u64) -> Result<String, PaymentError> {
        let url = format!("{}/payments/{order_id}", self.base_url);
        let response = self
            .http
            .post(url)
            .send()
            .await
            .map_err(PaymentError::Http)?;
        let response = response.error_for_status().map_err(PaymentError::Http)?;
        response.text().await.map_err(PaymentError::Http)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // resilience.toml (compiled in, the file the attribute checked) + CLIENT_… overrides.
    let settings = outbound_guard::settings!()?;
    let guards = Guards::new(&settings);
    // `new` gets the `sber` guard; an adapter holding another system's is refused.
    let sber = guards.try_adapter(SberAdapter::new)?;
    match sber.register(42).await {
        Ok(payment) => println!("paid: {payment}"),
        Err(PaymentError::Unavailable(e)) => println!("sber is unavailable, try later: {e}"),
        Err(PaymentError::Http(e)) => println!("sber answered with an error: {e}"),
    }
    Ok(())
}
