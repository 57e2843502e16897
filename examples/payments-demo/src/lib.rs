//! The demo payments service of `outbound-guard`: a small order service laid out like the
//! Resilience Style Guide's hexagonal examples, whose two out-adapters (Sber payments
//! and the customer directory) are guarded by `#[circuit_breaker]`.
//!
//! - [`core`]: the domain, the ports and their errors, the order use cases.
//! - [`adapters`]: the HTTP API (inbound) and the Sber, customer and order-store
//!   adapters (outbound).
//! - [`bootstrap`]: settings → guards → adapters, and port errors → HTTP.
//! - [`fakes`]: in-process fake Sber and customer servers with switchable faults (the
//!   routes of each system, served by the integration suite's fake upstream).
//! - [`scenario`]: the load generator and the live report that `cargo run -p
//!   payments-demo` shows.
#![deny(missing_docs)]

pub mod adapters;
pub mod bootstrap;
pub mod core;
pub mod fakes;
pub mod scenario;
