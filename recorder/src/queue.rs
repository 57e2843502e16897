//! What the observer hands the writer: one record a call or transition, small and
//! allocation-free for a call, and the counters both sides share.

use std::sync::atomic::AtomicU64;
use std::sync::mpsc::SyncSender;
use std::time::Duration;

use tokio::time::Instant;

use outbound_guard::Outcome;

/// Counters shared by the observer and its writer.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) written: AtomicU64,
    pub(crate) dropped_queue_full: AtomicU64,
    pub(crate) dropped_write_error: AtomicU64,
    pub(crate) rotations: AtomicU64,
}

/// A system's name held inline, so that a call's record allocates nothing: names are
/// at most 64 characters (the settings' rule); a longer one is cut at a character
/// boundary.
#[derive(Clone, Copy)]
pub(crate) struct SystemName {
    bytes: [u8; 64],
    len: u8,
}

impl SystemName {
    pub(crate) fn new(name: &str) -> SystemName {
        let mut len = name.len().min(64);
        while !name.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; 64];
        bytes[..len].copy_from_slice(&name.as_bytes()[..len]);
        SystemName {
            bytes,
            len: len as u8,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for SystemName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

/// One record, as the caller's thread hands it over: no formatting, no allocation for a
/// call, no clock other than tokio's.
#[derive(Debug)]
pub(crate) enum Record {
    Call {
        system: SystemName,
        start: Instant,
        duration: Duration,
        outcome: Outcome,
    },
    Transition {
        system: Box<str>,
        at: Instant,
        from: &'static str,
        to: &'static str,
        reason: &'static str,
        why: String,
        /// Made in observe mode: what the breaker would have done.
        observing: bool,
    },
    /// The limits a system's calls run under from now on.
    Limits {
        system: Box<str>,
        at: Instant,
        read_timeout: Duration,
        total_timeout: Duration,
    },
    /// An adaptive bulkhead's limit from now on.
    BulkheadLimit {
        system: SystemName,
        at: Instant,
        limit: usize,
    },
    /// Observe mode turned on or off for a system.
    Observing {
        system: Box<str>,
        at: Instant,
        observing: bool,
    },
    /// Everything before it is written and flushed: tell the sender.
    Flush(SyncSender<()>),
}
