//! What a recorder has done so far, as its counters read at one moment.

/// What a [`Recorder`](crate::recorder::Recorder) has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecorderStats {
    /// Records written to the file.
    pub written: u64,
    /// Records dropped because the queue was full.
    pub dropped_queue_full: u64,
    /// Records dropped because writing them failed (a full disk, a removed directory),
    /// or because the format has no name for their verdict (a core newer than the
    /// recorder: the two are released together).
    pub dropped_write_error: u64,
    /// Times the file was rotated.
    pub rotations: u64,
}
