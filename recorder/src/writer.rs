//! The recorder's background thread: it takes records off the queue, formats them and
//! writes the file, rotating it by size. Nothing here runs on a caller's thread.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, SystemTime};

use outbound_guard::Outcome;
use outbound_guard_recording::Line;
use tokio::time::Instant;

use crate::line;
use crate::queue::{Counters, Record};

/// How long the writer sleeps when the queue is empty.
const POLL: Duration = Duration::from_millis(5);

/// tokio's clock anchored at the wall clock: a record's `Instant` becomes a time of day.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    pub(crate) wall: SystemTime,
    pub(crate) instant: Instant,
}

impl Clock {
    fn wall(&self, at: Instant) -> SystemTime {
        if at >= self.instant {
            self.wall + (at - self.instant)
        } else {
            self.wall
                .checked_sub(self.instant - at)
                .unwrap_or(SystemTime::UNIX_EPOCH)
        }
    }
}

/// The file being written, and how it rotates. Lines gather in a buffer of our own,
/// written in one piece, so that a failed write knows how many records it lost.
pub(crate) struct File {
    path: PathBuf,
    out: fs::File,
    /// Lines not yet written, and how many records they hold.
    buffer: Vec<u8>,
    buffered: u64,
    /// Bytes in the file, the buffer's included.
    size: u64,
    max_bytes: u64,
    keep: u32,
}

/// Bytes gathered before they are written.
const BUFFER: usize = 64 * 1024;

impl File {
    pub(crate) fn open(path: PathBuf, max_bytes: u64, keep: u32) -> io::Result<File> {
        let out = OpenOptions::new().create(true).append(true).open(&path)?;
        let size = out.metadata().map_or(0, |m| m.len());
        Ok(File {
            path,
            out,
            buffer: Vec::with_capacity(BUFFER + 512),
            buffered: 0,
            size,
            max_bytes,
            keep,
        })
    }

    fn rotated(&self, n: u32) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    /// Writes the buffer out; its records are counted written, or dropped if it fails.
    fn flush(&mut self, counters: &Counters) {
        if self.buffer.is_empty() {
            return;
        }
        let counter = match self.out.write_all(&self.buffer) {
            Ok(()) => &counters.written,
            Err(_) => &counters.dropped_write_error,
        };
        counter.fetch_add(self.buffered, Ordering::Relaxed);
        self.buffer.clear();
        self.buffered = 0;
    }

    /// Renames the file `FILE.1` (and the older ones one further) and starts a new one.
    fn rotate(&mut self, counters: &Counters) -> io::Result<()> {
        self.flush(counters);
        if self.keep == 0 {
            self.out = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&self.path)?;
        } else {
            for n in (1..self.keep).rev() {
                let from = self.rotated(n);
                if from.exists() {
                    fs::rename(&from, self.rotated(n + 1))?;
                }
            }
            fs::rename(&self.path, self.rotated(1))?;
            self.out = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
        }
        self.size = 0;
        counters.rotations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Adds one record's line, rotating first if it would pass the size.
    fn push(&mut self, text: &[u8], counters: &Counters) {
        if self.size > 0 && self.size + text.len() as u64 > self.max_bytes {
            // A rotation that fails keeps writing the same file.
            let _ = self.rotate(counters);
        }
        self.buffer.extend_from_slice(text);
        self.buffered += 1;
        self.size += text.len() as u64;
        if self.buffer.len() >= BUFFER {
            self.flush(counters);
        }
    }
}

/// The thread's loop: until every sender is gone, then a last flush.
///
/// It polls the queue rather than blocking on it: a caller pushing a record then never
/// has a sleeping writer to wake (a system call on the call path). When the queue is
/// empty it writes out what it has gathered and sleeps for [`POLL`].
pub(crate) fn run(records: &Receiver<Record>, mut file: File, clock: Clock, counters: &Counters) {
    let mut text = Vec::with_capacity(256);
    // Each system's `read_timeout` and `total_timeout` in effect, from its latest
    // limits' record.
    let mut timeouts: std::collections::HashMap<Box<str>, (Duration, Duration)> =
        std::collections::HashMap::new();
    loop {
        let record = match records.try_recv() {
            Ok(record) => record,
            Err(TryRecvError::Empty) => {
                file.flush(counters);
                std::thread::sleep(POLL);
                continue;
            }
            Err(TryRecvError::Disconnected) => break,
        };
        text.clear();
        match record {
            Record::Call {
                system,
                start,
                duration,
                outcome,
            } => {
                // A failure that lasted the client's whole `read_timeout` was cut by it:
                // the upstream had not answered, and would have taken at least that long.
                let cut = outcome == Outcome::Failure
                    && timeouts
                        .get(system.as_str())
                        .is_some_and(|(read, _)| duration >= *read);
                let written = line::call(
                    &mut text,
                    system.as_str(),
                    clock.wall(start),
                    duration,
                    outcome,
                    cut,
                );
                if !written {
                    counters.dropped_write_error.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            Record::Transition {
                system,
                at,
                from,
                to,
                reason,
                why,
                observing,
            } => {
                let at = line::micros(clock.wall(at));
                Line::transition(&system, at, from, to, reason, &why, observing).write(&mut text);
            }
            Record::Limits {
                system,
                at,
                read_timeout,
                total_timeout,
            } => {
                let (read, total) = (line::span(read_timeout), line::span(total_timeout));
                Line::limits(&system, line::micros(clock.wall(at)), read, total).write(&mut text);
                timeouts.insert(system, (read_timeout, total_timeout));
            }
            Record::BulkheadLimit { system, at, limit } => {
                // The limits' line again, with the limit: a reader that does not know
                // `bulkhead_limit` reads it as the limits it already had. Without them
                // (their record dropped with a full queue) it is dropped too.
                let Some(&(read, total)) = timeouts.get(system.as_str()) else {
                    counters.dropped_queue_full.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                let at = line::micros(clock.wall(at));
                let (read, total) = (line::span(read), line::span(total));
                let limit = u32::try_from(limit).unwrap_or(u32::MAX);
                Line::bulkhead_limit(system.as_str(), at, read, total, limit).write(&mut text);
            }
            Record::Observing {
                system,
                at,
                observing,
            } => {
                Line::observing(&system, line::micros(clock.wall(at)), observing).write(&mut text);
            }
            Record::Flush(ack) => {
                file.flush(counters);
                let _ = ack.send(());
                continue;
            }
        }
        file.push(&text, counters);
    }
    file.flush(counters);
}
