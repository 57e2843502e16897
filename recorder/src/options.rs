//! How a recorder queues and keeps its records: the queue's length and the file's
//! rotation.

/// How a [`Recorder`](crate::recorder::Recorder) queues and keeps its records.
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
