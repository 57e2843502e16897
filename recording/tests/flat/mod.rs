//! The flat `Line` this crate had before its line became an enum of its kinds (commit
//! 7f38406, `recording/src/lib.rs`): one struct of every field, its kind decided by
//! `entry()`. Kept here, as it was, as the reference the typed `Line` is held to: each
//! writes the same bytes, and each reads every line alike (`tests/same_json.rs`). Its
//! names (`Outcome`, `Cause`, `Cut`, `Start`) are the crate's: they did not change.

use std::borrow::Cow;
use std::time::SystemTime;

use outbound_guard_recording::{Cause, Cut, Outcome, Start};
use serde::{Deserialize, Serialize};

/// One line of a recording, field for field; [`Line::entry`] says which kind it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line<'a> {
    /// The system called: the name of its `[systems.NAME]` table.
    #[serde(borrow)]
    pub system: Cow<'a, str>,
    /// When the call started, or when the transition or setting took effect.
    #[serde(borrow)]
    pub start: Start<'a>,
    /// A call's: how long it ran (or waited, refused by a full bulkhead), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// A call's: how it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// A `timeout`'s: what cut it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// A `rejected` call's: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// A transition's: the state entered (`open`, `half_open`, `closed`, `forced_open`,
    /// `disabled`).
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub transition: Option<Cow<'a, str>>,
    /// A transition's: the state left.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub from: Option<Cow<'a, str>>,
    /// A transition's: why (`failure_rate`, …, `manual` for an operator, `settings` for
    /// the file's `cb_mode`).
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Cow<'a, str>>,
    /// A transition's: its log line.
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub why: Option<Cow<'a, str>>,
    /// On a transition: made in observe mode (what the breaker would have done). Alone:
    /// observe mode turned on or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observing: Option<bool>,
    /// The limits' line: the `read_timeout` the system's calls run under from then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_timeout_ms: Option<f64>,
    /// The limits' line: their `total_timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_timeout_ms: Option<f64>,
}

/// A recorded call, read ([`Entry::Call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// Microseconds it ran (or waited), at most about 71 minutes.
    pub duration_micros: u32,
    /// How it ended.
    pub outcome: Outcome,
    /// What cut it short, on a `timeout` only.
    pub cut: Option<Cut>,
}

/// A recorded transition, read ([`Entry::Transition`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition<'a> {
    /// The state entered.
    pub to: Cow<'a, str>,
    /// The state left (empty if the line has none).
    pub from: Cow<'a, str>,
    /// Why (empty if the line has none).
    pub reason: Cow<'a, str>,
    /// Its log line (empty if the line has none).
    pub why: Cow<'a, str>,
    /// Made in observe mode.
    pub observing: bool,
}

/// What a line records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry<'a> {
    /// A guarded call.
    Call(Call),
    /// A transition of the breaker.
    Transition(Transition<'a>),
    /// Observe mode turned on (`true`) or off.
    Observing(bool),
    /// The limits of the system's calls from then on, in microseconds.
    Limits {
        /// `read_timeout`.
        read_micros: u64,
        /// `total_timeout`.
        total_micros: u64,
    },
}

/// The year 10000, in milliseconds since 1970: no recording starts later.
const LATEST_MILLIS: f64 = 253_402_300_800_000.0;

/// Milliseconds, exact to the microsecond, from microseconds.
fn millis(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

/// A field's text, or an empty one.
fn or_empty(field: Option<&str>) -> Cow<'_, str> {
    Cow::Borrowed(field.unwrap_or(""))
}

/// A number as a person wrote it: `1e30` rather than thirty-one digits.
fn number(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e16 {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

impl<'a> Line<'a> {
    fn new(system: &'a str, start_micros: u64) -> Line<'a> {
        Line {
            system: Cow::Borrowed(system),
            start: Start::Millis(millis(start_micros)),
            duration_ms: None,
            outcome: None,
            cut: None,
            cause: None,
            transition: None,
            from: None,
            reason: None,
            why: None,
            observing: None,
            read_timeout_ms: None,
            total_timeout_ms: None,
        }
    }

    /// A call's line: it started `start_micros` after the Unix epoch and lasted
    /// `duration_micros`.
    #[must_use]
    pub fn call(
        system: &'a str,
        start_micros: u64,
        duration_micros: u64,
        outcome: Outcome,
        cut: Option<Cut>,
        cause: Option<Cause>,
    ) -> Line<'a> {
        Line {
            duration_ms: Some(millis(duration_micros)),
            outcome: Some(outcome),
            cut,
            cause,
            ..Line::new(system, start_micros)
        }
    }

    /// A transition's line, from the states' and the reason's names and its log line.
    #[must_use]
    pub fn transition(
        system: &'a str,
        at_micros: u64,
        from: &'a str,
        to: &'a str,
        reason: &'a str,
        why: &'a str,
        observing: bool,
    ) -> Line<'a> {
        Line {
            transition: Some(Cow::Borrowed(to)),
            from: Some(Cow::Borrowed(from)),
            reason: Some(Cow::Borrowed(reason)),
            why: Some(Cow::Borrowed(why)),
            observing: observing.then_some(true),
            ..Line::new(system, at_micros)
        }
    }

    /// The limits' line: the system's calls run under these from `at_micros` on.
    #[must_use]
    pub fn limits(
        system: &'a str,
        at_micros: u64,
        read_micros: u64,
        total_micros: u64,
    ) -> Line<'a> {
        Line {
            read_timeout_ms: Some(millis(read_micros)),
            total_timeout_ms: Some(millis(total_micros)),
            ..Line::new(system, at_micros)
        }
    }

    /// The line of observe mode turned on or off at `at_micros`.
    #[must_use]
    pub fn observing(system: &'a str, at_micros: u64, observing: bool) -> Line<'a> {
        Line {
            observing: Some(observing),
            ..Line::new(system, at_micros)
        }
    }

    /// The line as JSON, without a newline.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads one line (without its newline). The error names the column within it,
    /// never a line: the reader numbers its lines itself.
    ///
    /// # Errors
    ///
    /// Not JSON, not an object of this shape, or cut short (`truncated: …`).
    pub fn parse(text: &'a str) -> Result<Line<'a>, String> {
        serde_json::from_str(text).map_err(|e| {
            // serde's own position ("at line 1 column 62") counts within this line.
            let message = e.to_string();
            let what = message.split(" at line ").next().unwrap_or(&message);
            if e.is_eof() {
                format!("truncated: {what}")
            } else {
                format!("not a record: {what} (column {})", e.column())
            }
        })
    }

    /// The line's `start`, in microseconds since the Unix epoch.
    ///
    /// # Errors
    ///
    /// Not a number of milliseconds between 1970 and the year 10000, nor an RFC 3339 time.
    pub fn start_micros(&self) -> Result<i64, String> {
        match &self.start {
            Start::Millis(ms) if ms.is_finite() && (0.0..LATEST_MILLIS).contains(ms) => {
                Ok((ms * 1000.0).round() as i64)
            }
            Start::Millis(ms) => Err(format!(
                "`start` {}: expected milliseconds since 1970, before the year 10000",
                number(*ms)
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

    /// What the line records: a transition if it has `transition`, observe mode if it
    /// has `observing` and no `outcome`, the limits if it has both of theirs and no
    /// `outcome`, else a call.
    ///
    /// # Errors
    ///
    /// An empty `system`, no `outcome` on a call, a `cut` on anything but a `timeout`,
    /// a negative or non-finite duration or limit.
    pub fn entry(&self) -> Result<Entry<'_>, String> {
        if self.system.is_empty() {
            return Err("`system` is empty".into());
        }
        if let Some(to) = &self.transition {
            return Ok(Entry::Transition(Transition {
                to: Cow::Borrowed(to.as_ref()),
                from: or_empty(self.from.as_deref()),
                reason: or_empty(self.reason.as_deref()),
                why: or_empty(self.why.as_deref()),
                observing: self.observing == Some(true),
            }));
        }
        if let (None, Some(observing)) = (self.outcome, self.observing) {
            return Ok(Entry::Observing(observing));
        }
        if let (None, Some(read), Some(total)) =
            (self.outcome, self.read_timeout_ms, self.total_timeout_ms)
        {
            let micros = |ms: f64, key: &str| {
                if ms.is_finite() && (0.0..=86_400_000.0).contains(&ms) {
                    Ok((ms * 1000.0).round() as u64)
                } else {
                    Err(format!(
                        "`{key}` {}: expected milliseconds between 0 and a day",
                        number(ms)
                    ))
                }
            };
            return Ok(Entry::Limits {
                read_micros: micros(read, "read_timeout_ms")?,
                total_micros: micros(total, "total_timeout_ms")?,
            });
        }
        let outcome = self
            .outcome
            .ok_or("neither `outcome`, `transition` nor `observing`")?;
        if self.cut.is_some() && outcome != Outcome::Timeout {
            return Err("`cut` \"read_timeout\": expected on a `timeout` only".into());
        }
        let duration = self.duration_ms.unwrap_or(0.0);
        if !duration.is_finite() || duration < 0.0 {
            return Err(format!(
                "`duration_ms` {}: expected milliseconds ≥ 0",
                number(duration)
            ));
        }
        Ok(Entry::Call(Call {
            // At most about 71 minutes: far beyond any total_timeout.
            duration_micros: (duration * 1000.0).round().min(f64::from(u32::MAX)) as u32,
            outcome,
            cut: self.cut,
        }))
    }
}
