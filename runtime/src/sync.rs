//! The synchronisation primitives the breaker's core uses. The `model-check` crate
//! compiles the same core against loom's versions of these.

pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
pub(crate) use std::sync::{Mutex, MutexGuard};
