//! The recorder of [`outbound-guard`](outbound_guard): an
//! [`Observer`](outbound_guard::Observer) that writes every guarded call, and every
//! breaker transition, as one JSON line, for `outbound-guard replay` to play back
//! through other settings. A crate beside the core, as `console-subscriber` is beside
//! tokio: a service that records adds this crate and one observer to its guards; one
//! that does not compiles none of it.
//!
//! In `Cargo.toml`, beside `outbound-guard`: `outbound-guard-recorder = "0.2"`. Then one
//! [`Recorder`], given to the guards as an observer:
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use outbound_guard_recorder::{Recorder, RecorderOptions};
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
//! cost does not change). An adaptive bulkhead (`bulkhead = "adaptive"`) writes the same
//! line again with `"bulkhead_limit":N` when the guard is built, after each reload and at
//! each change of its limit: a reader that does not know the key reads it as the limits
//! it already had.
//!
//! In observe mode (`cb_mode = "observe"`) a line `{"system":"sber","start":…,"observing":true}`
//! says so when it is turned on (`false` when turned off), every call is recorded with
//! its real outcome (the breaker refuses none), and each transition, what the breaker
//! would have done, ends with `"observing":true`: `"why":"sber would have opened: …"`.
//!
//! `start` is the call's start in milliseconds since the Unix epoch (UTC), with
//! microseconds; it follows tokio's clock from the wall-clock time the recorder was
//! built, so starts never go backwards within one recording (and a test's paused clock
//! records consistent times). `outcome` is the guard's verdict
//! ([`Outcome`](outbound_guard::Outcome)): `success`, `failure`, `slow`, `timeout`,
//! `cancelled`, or `rejected` with a `cause` (`open`, `half_open_full`, `forced_open`,
//! `bulkhead_full`). An error that the adapter's `failure_if` does not count is recorded
//! as `success`: the guard's verdict does not tell it from an `Ok`.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod line;
mod options;
mod queue;
mod recorder;
mod stats;
mod writer;

pub use self::options::RecorderOptions;
pub use self::recorder::Recorder;
pub use self::stats::RecorderStats;
