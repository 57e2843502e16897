//! A line's `start`: milliseconds since the Unix epoch as the recorder writes it, or an
//! RFC 3339 time as a converted access log gives it.

use std::borrow::Cow;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::number::shown;

/// The year 10000, in milliseconds since 1970: no recording starts later.
const LATEST_MILLIS: f64 = 253_402_300_800_000.0;

/// A line's `start`: milliseconds since the Unix epoch, or an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Start<'a> {
    /// Milliseconds since 1970 (UTC), with up to three decimals.
    Millis(f64),
    /// An RFC 3339 time: `2026-12-04T14:33:28.123Z`.
    #[serde(borrow)]
    Text(Cow<'a, str>),
}

impl Start<'_> {
    /// The start in microseconds since the Unix epoch.
    ///
    /// # Errors
    ///
    /// Not a number of milliseconds between 1970 and the year 10000, nor an RFC 3339 time.
    pub fn micros(&self) -> Result<i64, String> {
        match self {
            Start::Millis(ms) if ms.is_finite() && (0.0..LATEST_MILLIS).contains(ms) => {
                Ok((ms * 1000.0).round() as i64)
            }
            Start::Millis(ms) => Err(format!(
                "`start` {}: expected milliseconds since 1970, before the year 10000",
                shown(*ms)
            )),
            Start::Text(text) => humantime::parse_rfc3339_weak(text)
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_micros()).ok())
                .ok_or_else(|| {
                    format!("`start` {text:?}: expected an RFC 3339 time (2026-12-04T14:33:28.123Z) or milliseconds since 1970")
                }),
        }
    }
}
