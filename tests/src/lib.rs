//! The cross-crate integration suite: guarded out-adapters under real faults over HTTP,
//! a bounded soak, and the attribute's HTTP end-to-end tests.
//!
//! - [`upstream`]: fake upstreams on 127.0.0.1 whose faults are switched per test while
//!   they run: 5xx bursts or a share of 5xx, slow answers, hangs (silent, or a body that
//!   trickles forever), flapping health, a reset mid-body, a refused connection, and a
//!   server shut down under its clients. They count hits and the high-water mark of
//!   concurrent requests. The demo's fake Sber and customer servers are these, serving
//!   their own routes.
//! - [`adapters`]: out-adapters annotated with `#[outbound_guard::circuit_breaker]`, each
//!   with its own `reqwest` client built from its system's settings.
//! - [`recorder`]: an [`Observer`](outbound_guard::Observer) that records every call's
//!   outcome and every transition, for exact assertions (and for the demo's report).
//! - [`alloc`]: the counting global allocator of the soak and of the hot-path budget tests.
//!
//! The tests in `tests/` drive them; so does the time-to-fast-fail comparison of our
//! guard with recloser, failsafe and tower-resilience (`benches/examples/fast_fail.rs`).
#![deny(missing_docs)]

pub mod adapters;
pub mod alloc;
pub mod recorder;
pub mod upstream;

use outbound_guard::{Settings, SystemSettings};

/// Parses inline settings text (the tests' scaled-down timings) and returns them.
///
/// # Panics
///
/// If the text is not valid settings: the tests' own settings are expected to be.
pub fn settings(text: &str) -> Settings {
    match Settings::parse(text, "inline") {
        Ok(settings) => settings,
        Err(error) => panic!("the test's settings are invalid: {error}"),
    }
}

/// One system's settings from inline text declaring it.
///
/// # Panics
///
/// If the text is invalid or does not declare `system`.
pub fn system_settings(text: &str, system: &str) -> SystemSettings {
    settings(text)
        .system(system)
        .unwrap_or_else(|| panic!("the settings declare no system `{system}`"))
        .clone()
}
