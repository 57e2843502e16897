//! The synchronisation primitives the breaker's core and its delivery of transitions
//! use. The `model-check` crate compiles the same files against loom's versions of
//! these.

pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
pub(crate) use std::sync::{Mutex, MutexGuard};
