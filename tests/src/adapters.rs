//! Out-adapters annotated with `#[outbound_guard::circuit_breaker]`, as a service writes
//! them: one per system, each holding its system's guard and its own HTTP client
//! (R-RES-ISO-1), the guard's rejection mapped to the port's error (R-RES-CB-6). The
//! Sber adapter is written as the guide's design card writes it (the system named on
//! each method); the customer adapter declares its system once, on its derive.

use outbound_guard::{Cause, CircuitBreakerError, Guard, SystemSettings};

/// The port's error: what callers of an adapter see. The raw guard error never leaves
/// the adapter; it arrives wrapped in [`PortError::Unavailable`].
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The guard refused or cut short the call: the system is unavailable.
    #[error("system unavailable: {0}")]
    Unavailable(CircuitBreakerError),
    /// The system answered with a 5xx.
    #[error("upstream answered HTTP {0}")]
    Upstream(u16),
    /// The system answered with a 4xx: a business answer, not an outage.
    #[error("request declined with HTTP {0}")]
    Declined(u16),
    /// The connection failed: refused, reset, timed out reading.
    #[error("transport: {0}")]
    Transport(String),
}

impl PortError {
    /// The `error_map` of every adapter here.
    pub fn unavailable(error: CircuitBreakerError) -> Self {
        PortError::Unavailable(error)
    }

    /// The `failure_if` of the adapters: a declined request is the system answering.
    pub fn is_outage(&self) -> bool {
        !matches!(self, PortError::Declined(_))
    }

    /// The guard's cause, if the guard refused or cut short the call.
    pub fn cause(&self) -> Option<&Cause> {
        match self {
            PortError::Unavailable(error) => Some(error.cause()),
            _ => None,
        }
    }

    /// Whether the guard refused the call without running it.
    pub fn is_rejection(&self) -> bool {
        matches!(self, PortError::Unavailable(e) if e.is_rejection())
    }
}

fn transport(error: reqwest::Error) -> PortError {
    PortError::Transport(error.to_string())
}

/// A system's HTTP client, configured from its settings: connect and read timeouts and
/// an idle pool of `max_keepalive` connections (R-RES-ISO-2).
///
/// # Panics
///
/// If reqwest cannot build a client (it can, for these options).
pub fn http_client(settings: &SystemSettings) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout())
        .read_timeout(settings.read_timeout())
        .pool_max_idle_per_host(settings.max_keepalive() as usize)
        .no_proxy()
        .build()
        .expect("a plain-HTTP reqwest client builds")
}

/// GETs `url` and reads the whole body: a 2xx is `Ok(body)`, a 4xx `Declined`, a 5xx
/// `Upstream`, a connection or body failure `Transport`.
async fn fetch(http: &reqwest::Client, url: String) -> Result<String, PortError> {
    let response = http.get(url).send().await.map_err(transport)?;
    let status = response.status();
    let body = response.text().await.map_err(transport)?;
    if status.is_success() {
        Ok(body)
    } else if status.is_client_error() {
        Err(PortError::Declined(status.as_u16()))
    } else {
        Err(PortError::Upstream(status.as_u16()))
    }
}

/// The Sber adapter: a critical payments system, in the design card's form.
#[derive(outbound_guard::Guarded, Debug, Clone)]
pub struct SberAdapter {
    guard: Guard,
    http: reqwest::Client,
    base: String,
}

impl SberAdapter {
    /// The adapter for the `sber` guard, calling `base` (`http://127.0.0.1:PORT`).
    pub fn new(guard: Guard, base: &str) -> Self {
        let http = http_client(&guard.settings());
        SberAdapter {
            guard,
            http,
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// The adapter's guard, for assertions on its breaker and bulkhead.
    pub fn system_guard(&self) -> &Guard {
        &self.guard
    }

    /// Registers a payment. A declined request (4xx) does not count against the breaker;
    /// a slow call's answer is returned and its slowness counted.
    #[outbound_guard::circuit_breaker(
        system = "sber",
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage
    )]
    pub async fn register(&self, id: u64) -> Result<String, PortError> {
        fetch(&self.http, format!("{}/payments/{id}", self.base)).await
    }

    /// Like [`register`](Self::register), but a slow call is an error
    /// ([`Cause::Slow`]) instead of its answer: the guide's literal behaviour.
    #[outbound_guard::circuit_breaker(
        system = "sber",
        error_map = PortError::unavailable,
        failure_if = PortError::is_outage,
        slow_as_error
    )]
    pub async fn register_strict(&self, id: u64) -> Result<String, PortError> {
        fetch(&self.http, format!("{}/payments/{id}", self.base)).await
    }
}

/// The customer adapter: a second, independent system.
#[derive(outbound_guard::Guarded, Debug, Clone)]
#[guarded(system = "customer")]
pub struct CustomerAdapter {
    guard: Guard,
    http: reqwest::Client,
    base: String,
}

impl CustomerAdapter {
    /// The adapter for the `customer` guard, calling `base`.
    pub fn new(guard: Guard, base: &str) -> Self {
        let http = http_client(&guard.settings());
        CustomerAdapter {
            guard,
            http,
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// The adapter's guard.
    pub fn system_guard(&self) -> &Guard {
        &self.guard
    }

    /// Looks a customer up.
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn get(&self, id: u64) -> Result<String, PortError> {
        fetch(&self.http, format!("{}/customers/{id}", self.base)).await
    }
}

/// The adapter of the time-to-fast-fail comparison: one GET to its upstream, every
/// error an outage. Behind the feature `fast-fail` (the benches'): a binary linking
/// this crate for its fakes (the demo) does not call `upstream`, so it must not link
/// a guard naming it (a mounted settings file is required to hold every such system).
#[cfg(feature = "fast-fail")]
#[derive(outbound_guard::Guarded, Debug, Clone)]
#[guarded(system = "upstream")]
pub struct UpstreamAdapter {
    guard: Guard,
    http: reqwest::Client,
    base: String,
}

#[cfg(feature = "fast-fail")]
impl UpstreamAdapter {
    /// The adapter for the `upstream` guard, calling `base` with `http`.
    pub fn new(guard: Guard, http: reqwest::Client, base: &str) -> Self {
        UpstreamAdapter {
            guard,
            http,
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// One call.
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn call(&self) -> Result<String, PortError> {
        upstream_call(&self.http, &self.base).await
    }
}

/// The call every subject of the comparison wraps: one GET of `base/work`.
///
/// # Errors
///
/// As [`PortError`] says: a 4xx or 5xx answer, or a transport failure.
pub async fn upstream_call(http: &reqwest::Client, base: &str) -> Result<String, PortError> {
    fetch(http, format!("{base}/work")).await
}
