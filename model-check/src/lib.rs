//! Loom model checks of the circuit breaker's core and of the bulkhead's core.
//!
//! Nothing here is a copy: `breaker.rs` compiles the runtime's own
//! `runtime/src/breaker/state.rs` and `window.rs` by path, and this crate's `sync` module
//! hands them loom's `AtomicU64`, `Mutex` and `Ordering` where the runtime's hands them
//! std's. The checks themselves are in `tests.rs`.
//!
//! Likewise `slots` is the runtime's `runtime/src/bulkhead/slots.rs`, the bulkhead's
//! lock-free permit and waiter count; `bulkhead_tests.rs` checks it together with a loom
//! model of the tokio `Notify` queue the runtime's thin async layer waits on.
//!
//! `saturation` is the runtime's `runtime/src/saturation.rs`: how many turned-away
//! callers the slow calls filling a bulkhead may stand for; `saturation_tests.rs`
//! checks its rule.
// Items of state.rs that only the runtime's `Breaker` uses.
#![allow(dead_code)]

/// The primitives `state.rs` imports as `crate::sync::…`: loom's, so that loom explores
/// every interleaving of the core's atomics and lock.
mod sync {
    pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
    pub(crate) use loom::sync::{Mutex, MutexGuard};
}

mod breaker;

/// The runtime's bulkhead core (`runtime/src/bulkhead/slots.rs`), compiled as is.
#[path = "../../runtime/src/bulkhead/slots.rs"]
pub(crate) mod slots;

/// The runtime's count of permits held by slow calls (`runtime/src/saturation.rs`).
#[path = "../../runtime/src/saturation.rs"]
pub(crate) mod saturation;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod saturation_tests;

#[cfg(test)]
mod bulkhead_tests;
