use std::error::Error;

use outbound_guard::{circuit_breaker, CircuitBreakerError, Guard, Guards};

/// One adapter per external system, holding that system's guard and HTTP client.
#[derive(outbound_guard::Guarded)]
pub struct SberAdapter {
    guard: Guard,
    http: reqwest::Client,
    base_url: String,
}

impl SberAdapter {
    #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
    pub async fn register(&self, order_id: u64) -> Result<String, PaymentPortError> {
        let url = format!("{}/payments/{order_id}", self.base_url);
        let response = self
            .http
            .post(url)
            .send()
            .await
            .map_err(PaymentPortError::Http)?;
        let response = response
            .error_for_status()
            .map_err(PaymentPortError::Http)?;
        response.text().await.map_err(PaymentPortError::Http)
    }

    /// The adapter over `guard`, with an HTTP client built from its system's settings.
    ///
    /// # Errors
    ///
    /// If reqwest refuses the client, or the system has no `base_url`.
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

/// The payment port's error: the adapter's own, never a raw breaker error (R-RES-CB-6).
#[derive(Debug)]
pub enum PaymentPortError {
    SystemUnavailable(CircuitBreakerError),
    Http(reqwest::Error),
}

impl PaymentPortError {
    fn system_unavailable(error: CircuitBreakerError) -> Self {
        PaymentPortError::SystemUnavailable(error)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // resilience.toml (compiled in, the file the attribute checked) + CLIENT_… overrides.
    let settings = outbound_guard::settings!()?;
    let guards = Guards::new(&settings);
    // A call through another system's guard would be refused, never counted there.
    let sber = SberAdapter::new(guards.get("sber")?)?;
    match sber.register(42).await {
        Ok(payment) => println!("paid: {payment}"),
        Err(PaymentPortError::SystemUnavailable(e)) => {
            println!("sber is unavailable, try later: {e}");
        }
        Err(PaymentPortError::Http(e)) => println!("sber answered with an error: {e}"),
    }
    Ok(())
}
