//! Each system's HTTP client, built from its settings (feature `reqwest`): its own
//! client per system (R-RES-ISO-1) with the guide's connect and read timeouts and a
//! keep-alive pool of `max_keepalive` idle connections (`max_connections × 1.2` by
//! default, R-RES-ISO-2).
//!
//! Who enforces which key:
//!
//! | keys | enforced by |
//! |---|---|
//! | `total_timeout`, `cb_*`, `max_connections` (as the bulkhead's `× 0.8` permits), `bulkhead_wait` | the guard, on every `#[circuit_breaker]` call |
//! | `connect_timeout`, `read_timeout`, `max_keepalive` | the HTTP client, when built by [`client_builder`] (or by hand from the same values) |
//! | `base_url` | the adapter, which joins its paths to it |
//!
//! reqwest has no limit on connections in use; the guard's bulkhead bounds the calls in
//! flight to `max_connections × 0.8`, so a system never has more connections busy. The
//! guide's pool timeout (`connect_timeout`) is the bulkhead's `bulkhead_wait`, which
//! defaults to it.
//!
//! ```no_run
//! # fn build(settings: &outbound_guard::Settings) -> Result<(), reqwest::Error> {
//! let sber = settings.system("sber").expect("compiled against `sber`");
//! let client = outbound_guard::http::client_builder(sber)
//!     .user_agent("payments/1.0") // anything else the service wants
//!     .build()?;
//! # Ok(()) }
//! ```

use outbound_guard_settings::SystemSettings;

/// A `reqwest::ClientBuilder` for one system, with its settings applied:
///
/// - `connect_timeout` → [`ClientBuilder::connect_timeout`](reqwest::ClientBuilder::connect_timeout),
/// - `read_timeout` → [`ClientBuilder::read_timeout`](reqwest::ClientBuilder::read_timeout)
///   (the longest wait for each read of a response),
/// - `max_keepalive` → [`ClientBuilder::pool_max_idle_per_host`](reqwest::ClientBuilder::pool_max_idle_per_host).
///
/// The whole call's bound, `total_timeout`, is the guard's, so no request-wide
/// `timeout` is set here: a call timed out by the guard counts against the breaker,
/// one timed out inside reqwest would look like any other error. Build one client per
/// system and keep it in that system's adapter.
pub fn client_builder(settings: &SystemSettings) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout())
        .read_timeout(settings.read_timeout())
        .pool_max_idle_per_host(settings.max_keepalive() as usize)
}
