//! The synchronisation primitives the breaker's core, its delivery of transitions, the
//! bulkhead's word and its count of slow holders use: std's, or loom's when the runtime
//! is built for its model checks (`--cfg outbound_guard_loom`, see the `loom_tests` modules).
//!
//! The cfg is not plain `loom`: `--cfg loom` in `RUSTFLAGS` also reaches tokio, which
//! then fails to build without its own loom dependency.

#[cfg(not(outbound_guard_loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(outbound_guard_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(outbound_guard_loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(outbound_guard_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
