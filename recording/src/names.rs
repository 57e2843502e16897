//! The names a line gives a call's end: its outcome, a refusal's cause, what cut a
//! timeout short. Each is a `snake_case` string in the JSON, derived by serde.

use serde::{Deserialize, Serialize};

/// How a recorded call ended: the verdict of the guard that recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Finished in time with `Ok`, or with an error the adapter does not count.
    Success,
    /// Finished with an error that counts.
    Failure,
    /// Finished, but slower than the recording's `cb_slow_threshold`.
    Slow,
    /// No answer: cut at `total_timeout`, or (with [`Cut::ReadTimeout`]) by the client.
    Timeout,
    /// The caller gave up before it finished.
    Cancelled,
    /// Refused by the recording's breaker or bulkhead: it never ran ([`Cause`] says why).
    Rejected,
}

impl Outcome {
    /// Every outcome, in the order above.
    pub const ALL: [Outcome; 6] = [
        Outcome::Success,
        Outcome::Failure,
        Outcome::Slow,
        Outcome::Timeout,
        Outcome::Cancelled,
        Outcome::Rejected,
    ];
}

/// Why a `rejected` call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The breaker was open.
    Open,
    /// The breaker was half-open and its trials were all taken.
    HalfOpenFull,
    /// An operator forced the breaker open.
    ForcedOpen,
    /// The bulkhead was full.
    BulkheadFull,
}

impl Cause {
    /// Every cause, in the order above.
    pub const ALL: [Cause; 4] = [
        Cause::Open,
        Cause::HalfOpenFull,
        Cause::ForcedOpen,
        Cause::BulkheadFull,
    ];
}

/// What cut a `timeout` short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// The client's `read_timeout`: the call lasted at least that long, and how it would
    /// have ended later is not known.
    ReadTimeout,
}
