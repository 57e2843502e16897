//! The recorder: an [`Observer`] that writes every guarded call, and every breaker
//! transition, as one JSON line, for `outbound-guard replay` to play back through
//! other settings. Feature `record`.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use outbound_guard::record::{Recorder, RecorderOptions};
//! use outbound_guard::{Guards, Settings};
//! let settings = Settings::parse("[systems.sber]", "inline").unwrap();
//! let recorder = Arc::new(Recorder::to_file("calls.jsonl", RecorderOptions::default())?);
//! let guards = Guards::builder(&settings).observer(recorder.clone()).build();
//! // … the service runs …
//! recorder.flush(); // before exiting: everything recorded so far is on disk
//! # Ok(()) }
//! ```
//!
//! **What a call costs.** The observer only pushes a small record into a bounded
//! in-memory queue (`try_send`: no wait, no allocation, no system call); a background
//! thread polls the queue every few milliseconds, formats the lines and writes the file.
//! When the queue is full (the disk is slower than the calls) the record
//! is dropped and counted, never the call; a write that fails (a full disk) drops its
//! records and counts them too ([`RecorderStats`]).
//!
//! **What it keeps.** The file rotates by size: past
//! [`max_bytes`](RecorderOptions::max_bytes) it is renamed `FILE.1` (the older ones
//! `FILE.2`, …, up to [`keep`](RecorderOptions::keep) files), and a new one is started.
//!
//! **The format** (one JSON object a line, defined once in the `outbound-guard-recording`
//! crate, whose serde implementations this writes with and `outbound-guard replay` reads
//! with; the repository's `docs/recording.md` has the whole of it and how to turn an
//! access log into it):
//!
//! ```text
//! {"system":"sber","start":1764858808123.456,"duration_ms":12.345,"outcome":"success"}
//! {"system":"sber","start":1764858808200.0,"duration_ms":0.0,"outcome":"rejected","cause":"open"}
//! {"system":"sber","start":1764858808190.010,"transition":"open","from":"closed","reason":"failure_rate","why":"sber opened: 16 of 50 calls failed (32% ≥ 30%)"}
//! ```
//!
//! A line `{"system":"sber","start":…,"read_timeout_ms":1500.0,"total_timeout_ms":2000.0}`
//! gives the limits the system's calls run under, when the guard is built and on each
//! reload; a failure that lasted the whole `read_timeout` in effect was cut by the
//! client, and is written `"outcome":"timeout","cut":"read_timeout"`, so that a replay
//! knows it lasted at least that long (the writer thread decides it: the call's own
//! cost does not change).
//!
//! In observe mode (`cb_mode = "observe"`) a line `{"system":"sber","start":…,"observing":true}`
//! says so when it is turned on (`false` when turned off), every call is recorded with
//! its real outcome (the breaker refuses none), and each transition, what the breaker
//! would have done, ends with `"observing":true`: `"why":"sber would have opened: …"`.
//!
//! `start` is the call's start in milliseconds since the Unix epoch (UTC), with
//! microseconds; it follows tokio's clock from the wall-clock time the recorder was
//! built, so starts never go backwards within one recording (and a test's paused clock
//! records consistent times). `outcome` is the guard's verdict ([`Outcome`]):
//! `success`, `failure`, `slow`, `timeout`, `cancelled`, or `rejected` with a `cause`
//! (`open`, `half_open_full`, `forced_open`, `bulkhead_full`). An error that the
//! adapter's `failure_if` does not count is recorded as `success`: the guard's verdict
//! does not tell it from an `Ok`.

mod line;
mod queue;
mod writer;

use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use self::queue::{Counters, Record, SystemName};
use crate::error::Cause;
use crate::observer::{CallEvent, Observer, Outcome, Transition};

/// How a [`Recorder`] queues and keeps its records.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecorderOptions {
    /// Records waiting for the writer at most; one more is dropped and counted.
    /// Default 65 536 (about 8 MB of memory when full).
    pub queue: usize,
    /// The file's size at which it is rotated. Default 100 MB.
    pub max_bytes: u64,
    /// Rotated files kept beside the current one (`FILE.1` … `FILE.keep`); 0 keeps none
    /// (the file is truncated when full). Default 3.
    pub keep: u32,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            queue: 65_536,
            max_bytes: 100 * 1024 * 1024,
            keep: 3,
        }
    }
}

impl RecorderOptions {
    /// The queue's length (at least 1).
    #[must_use]
    pub fn queue(mut self, records: usize) -> Self {
        self.queue = records.max(1);
        self
    }

    /// The file's size at which it is rotated.
    #[must_use]
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// How many rotated files to keep.
    #[must_use]
    pub fn keep(mut self, files: u32) -> Self {
        self.keep = files;
        self
    }
}

/// What a [`Recorder`] has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecorderStats {
    /// Records written to the file.
    pub written: u64,
    /// Records dropped because the queue was full.
    pub dropped_queue_full: u64,
    /// Records dropped because writing them failed (a full disk, a removed directory).
    pub dropped_write_error: u64,
    /// Times the file was rotated.
    pub rotations: u64,
}

/// An [`Observer`] that records every call and transition of the guards it is given
/// to, as JSON lines in a file (see the [module](self)).
#[derive(Debug)]
pub struct Recorder {
    queue: SyncSender<Record>,
    counters: Arc<Counters>,
    path: PathBuf,
}

impl Recorder {
    /// Starts recording into `path` (appended to if it exists), with a background
    /// thread that writes it.
    ///
    /// # Errors
    ///
    /// The file cannot be opened for appending, or the thread cannot be started.
    pub fn to_file(path: impl Into<PathBuf>, options: RecorderOptions) -> io::Result<Recorder> {
        let path = path.into();
        let (queue, records) = sync_channel(options.queue.max(1));
        let counters = Arc::new(Counters::default());
        let clock = writer::Clock {
            wall: SystemTime::now(),
            instant: Instant::now(),
        };
        let file = writer::File::open(path.clone(), options.max_bytes, options.keep)?;
        let shared = counters.clone();
        std::thread::Builder::new()
            .name("outbound-guard-recorder".into())
            .spawn(move || writer::run(&records, file, clock, &shared))?;
        Ok(Recorder {
            queue,
            counters,
            path,
        })
    }

    /// The file it writes.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// What it has written and dropped so far.
    pub fn stats(&self) -> RecorderStats {
        RecorderStats {
            written: self.counters.written.load(Ordering::Relaxed),
            dropped_queue_full: self.counters.dropped_queue_full.load(Ordering::Relaxed),
            dropped_write_error: self.counters.dropped_write_error.load(Ordering::Relaxed),
            rotations: self.counters.rotations.load(Ordering::Relaxed),
        }
    }

    /// Waits until every record queued before it is written to the file and flushed.
    /// Blocks the calling thread: call it off the call path (before exiting).
    pub fn flush(&self) {
        let (ack, done) = sync_channel(1);
        if self.queue.send(Record::Flush(ack)).is_ok() {
            let _ = done.recv();
        }
    }

    fn push(&self, record: Record) {
        match self.queue.try_send(record) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counters
                    .dropped_queue_full
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Observer for Recorder {
    fn on_transition(&self, transition: &Transition<'_>) {
        self.push(Record::Transition {
            system: transition.system.into(),
            at: transition.at,
            from: transition.from.as_str(),
            to: transition.to.as_str(),
            reason: transition.reason.as_str(),
            why: transition.to_string(),
            observing: transition.observing,
        });
    }

    fn on_settings(&self, settings: &outbound_guard_settings::SystemSettings) {
        self.push(Record::Limits {
            system: settings.name().into(),
            at: Instant::now(),
            read_timeout: settings.read_timeout(),
            total_timeout: settings.total_timeout(),
        });
    }

    fn on_observing(&self, system: &str, observing: bool) {
        self.push(Record::Observing {
            system: system.into(),
            at: Instant::now(),
            observing,
        });
    }

    fn on_call(&self, call: &CallEvent<'_>) {
        let duration = match (call.elapsed, call.outcome) {
            (Some(elapsed), _) => elapsed,
            (None, Outcome::Rejected(Cause::BulkheadFull { waited, .. })) => waited,
            (None, _) => Duration::ZERO,
        };
        let now = Instant::now();
        self.push(Record::Call {
            system: SystemName::new(call.system),
            start: now.checked_sub(duration).unwrap_or(now),
            duration,
            outcome: call.outcome,
        });
    }
}

#[cfg(test)]
mod tests;
