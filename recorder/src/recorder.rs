//! The recorder itself: the observer a service gives its guards, which hands each call
//! and transition to the writer's queue without waiting, and what it offers its owner
//! (its file, its counters, a flush).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use outbound_guard::{CallEvent, Cause, Observer, Outcome, SystemSettings, Transition};
use tokio::time::Instant;

use crate::options::RecorderOptions;
use crate::queue::{Counters, Record, SystemName};
use crate::stats::RecorderStats;
use crate::writer;

/// An [`Observer`] that records every call and transition of the guards it is given
/// to, as JSON lines in a file (see the [crate](crate)).
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
    pub fn path(&self) -> &Path {
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

    fn on_settings(&self, settings: &SystemSettings) {
        self.push(Record::Limits {
            system: settings.name().into(),
            at: Instant::now(),
            read_timeout: settings.read_timeout(),
            total_timeout: settings.total_timeout(),
        });
    }

    fn on_bulkhead_limit(&self, system: &str, limit: usize) {
        self.push(Record::BulkheadLimit {
            system: SystemName::new(system),
            at: Instant::now(),
            limit,
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
