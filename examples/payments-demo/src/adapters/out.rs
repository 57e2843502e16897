//! The out-adapters: one per external system, each holding its own guard (breaker,
//! bulkhead, timeouts) and its own HTTP client (R-RES-ISO-1), every method of its port
//! guarded by `#[outbound_guard::adapter]` on the impl block (R-RES-CB-1). The order store is local and has
//! no breaker (R-RES-CB-X1).

pub mod customer;
pub mod memory;
pub mod sber;

use outbound_guard::SystemSettings;

/// Why an adapter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The system's settings have no `base_url`.
    #[error("system `{system}` has no `base_url`: set it in resilience.toml or with {variable}")]
    NoBaseUrl {
        /// The system.
        system: String,
        /// The environment variable that sets it.
        variable: String,
    },
    /// reqwest refused the client's configuration.
    #[error("system `{system}`: cannot build its HTTP client: {source}")]
    Client {
        /// The system.
        system: String,
        /// reqwest's error.
        source: reqwest::Error,
    },
    /// The adapter was given another system's guard.
    #[error(transparent)]
    WrongGuard(#[from] outbound_guard::WrongGuard),
}

/// `base` with `segments` appended to its path, each percent-encoded as one segment
/// (`Url::path_segments_mut`): a `/`, `?`, `#` or `%` inside an id stays inside it, so
/// no value can reach another path of the system. An empty, `.` or `..` segment is
/// refused: `Url` would drop it (`/customers/..` becomes `/customers`). The error says
/// why.
///
/// # Errors
///
/// If a segment is empty, `.` or `..`, or `base` is not a URL that can take a path.
pub fn endpoint(base: &str, segments: &[&str]) -> Result<reqwest::Url, String> {
    if let Some(bad) = segments.iter().find(|s| matches!(**s, "" | "." | "..")) {
        return Err(format!("refused path segment {bad:?}"));
    }
    let mut url = reqwest::Url::parse(base).map_err(|e| format!("base URL: {e}"))?;
    url.path_segments_mut()
        .map_err(|()| "base URL cannot take a path".to_owned())?
        .pop_if_empty()
        .extend(segments);
    Ok(url)
}

/// The system's own HTTP client (R-RES-ISO-1), from `outbound_guard_reqwest::client_builder`:
/// its connect and read timeouts and an idle pool of `max_keepalive` connections
/// (R-RES-ISO-2). The number of connections in use is bounded by the guard's bulkhead
/// (`max_connections × 0.8`); the whole call by the guard's `total_timeout`.
///
/// # Errors
///
/// If the system has no `base_url`, or reqwest refuses its client.
pub fn http_client(settings: &SystemSettings) -> Result<(reqwest::Client, String), BuildError> {
    let base_url = settings
        .base_url()
        .map(str::to_owned)
        .ok_or_else(|| BuildError::NoBaseUrl {
            system: settings.name().to_owned(),
            variable: settings.env_var(outbound_guard::settings::Key::BaseUrl),
        })?;
    // The demo only ever calls its own fakes on 127.0.0.1: no proxy.
    let client = outbound_guard_reqwest::client_builder(settings)
        .no_proxy()
        .build()
        .map_err(|source| BuildError::Client {
            system: settings.name().to_owned(),
            source,
        })?;
    Ok((client, base_url.trim_end_matches('/').to_owned()))
}
