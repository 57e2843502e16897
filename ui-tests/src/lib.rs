//! Tests of `#[circuit_breaker]` as a user's crate sees it. Its own `resilience.toml`
//! sits next to this crate's `Cargo.toml`, found by the same rule as in any service.
