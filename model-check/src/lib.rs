//! Loom model checks of the circuit breaker's core.
//!
//! Nothing here is a copy: `breaker.rs` compiles the runtime's own
//! `runtime/src/breaker/state.rs` and `window.rs` by path, and this crate's `sync` module
//! hands them loom's `AtomicU64`, `Mutex` and `Ordering` where the runtime's hands them
//! std's. The checks themselves are in `tests.rs`.
//!
//! The bulkhead is a `tokio::sync::Semaphore`, which tokio model-checks with loom itself;
//! nothing of it is re-checked here.
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

/// The runtime's count of permits held by slow calls (`runtime/src/saturation.rs`).
#[path = "../../runtime/src/saturation.rs"]
pub(crate) mod saturation;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod saturation_tests;
