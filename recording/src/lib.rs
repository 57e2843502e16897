//! The format of an `outbound-guard` recording, defined once: the runtime's recorder
//! writes it and `outbound-guard replay` reads it, both through [`Line`]'s serde
//! implementations.
//!
//! One JSON object a line, of four kinds ([`Entry`]):
//!
//! ```text
//! {"system":"sber","start":1764858808123.456,"duration_ms":12.345,"outcome":"success"}
//! {"system":"sber","start":1764858808200.0,"duration_ms":0.0,"outcome":"rejected","cause":"open"}
//! {"system":"sber","start":1764858808190.01,"transition":"open","from":"closed","reason":"failure_rate","why":"sber opened: 16 of 50 calls failed (32% ≥ 30%)"}
//! {"system":"sber","start":1764858808000.0,"read_timeout_ms":1500.0,"total_timeout_ms":2000.0}
//! {"system":"sber","start":1764858808000.0,"observing":true}
//! ```
//!
//! Times are milliseconds as JSON numbers with up to three decimals: microseconds,
//! exactly (a start of today in microseconds is below 2^53, and the shortest decimal
//! that reads back as the same `f64` has at most three decimals, so writing then reading
//! gives the same microsecond). A `start` may also be an RFC 3339 time
//! (`"2026-12-04T14:33:28.123Z"`), as a converted access log gives it.
//!
//! ```
//! use outbound_guard_recording::{Entry, Line, Outcome};
//! let line = Line::call("sber", 1_764_858_808_123_456, 12_345, Outcome::Success, None, None);
//! let text = line.to_json();
//! assert_eq!(
//!     text,
//!     r#"{"system":"sber","start":1764858808123.456,"duration_ms":12.345,"outcome":"success"}"#
//! );
//! let read = Line::parse(&text).unwrap();
//! assert_eq!(read.start_micros(), Ok(1_764_858_808_123_456));
//! assert!(matches!(read.entry(), Ok(Entry::Call(call)) if call.duration_micros == 12_345));
//! ```

#![deny(missing_docs)]

use std::borrow::Cow;
use std::time::SystemTime;

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

    /// Appends the line as JSON, and a newline.
    pub fn write(&self, out: &mut Vec<u8>) {
        // Writing into a `Vec` fails only for a map with non-string keys: a `Line` has none.
        let _ = serde_json::to_writer(&mut *out, self);
        out.push(b'\n');
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_line_reads_back_as_written() {
        let lines = [
            Line::call(
                "sber",
                1_764_858_808_123_456,
                12_345,
                Outcome::Success,
                None,
                None,
            ),
            Line::call(
                "sber",
                1_764_858_808_200_000,
                0,
                Outcome::Rejected,
                None,
                Some(Cause::HalfOpenFull),
            ),
            Line::call(
                "sber",
                1_764_858_808_200_001,
                1_500_000,
                Outcome::Timeout,
                Some(Cut::ReadTimeout),
                None,
            ),
            Line::transition(
                "sber",
                1_764_858_808_190_010,
                "closed",
                "open",
                "failure_rate",
                "sber \"opened\":\n16 of 50 ≥ 30%",
                true,
            ),
            Line::limits("sber", 1_764_858_808_000_000, 1_500_000, 2_000_000),
            Line::observing("sber", 1_764_858_808_000_000, false),
        ];
        let mut out = Vec::new();
        for line in &lines {
            line.write(&mut out);
        }
        let text = String::from_utf8(out).unwrap();
        for (line, written) in lines.iter().zip(text.lines()) {
            let read = Line::parse(written).unwrap();
            assert_eq!(&read, line, "{written}");
            assert_eq!(read.entry().unwrap(), line.entry().unwrap());
        }
        assert!(
            text.contains(r#""outcome":"rejected","cause":"half_open_full""#),
            "{text}"
        );
        assert!(
            text.contains(r#""outcome":"timeout","cut":"read_timeout""#),
            "{text}"
        );
        assert!(
            text.contains(r#""read_timeout_ms":1500.0,"total_timeout_ms":2000.0}"#),
            "{text}"
        );
    }

    /// Every microsecond of a day reads back as itself (a sample of a year's worth of
    /// starts and durations up to an hour).
    #[test]
    fn microseconds_survive_the_trip_through_milliseconds() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let start = 1_764_000_000_000_000 + x % 31_536_000_000_000;
            let duration = x % 3_600_000_000;
            let text = Line::call("s", start, duration, Outcome::Failure, None, None).to_json();
            let read = Line::parse(&text).unwrap();
            assert_eq!(
                read.start_micros(),
                Ok(i64::try_from(start).unwrap()),
                "{text}"
            );
            let Ok(Entry::Call(call)) = read.entry() else {
                panic!("{text}")
            };
            assert_eq!(u64::from(call.duration_micros), duration, "{text}");
        }
    }

    #[test]
    fn the_older_writer_s_lines_and_converted_ones_read() {
        let older = r#"{"system":"sber","start":1764858808123.456,"duration_ms":0.000,"outcome":"rejected","cause":"open"}"#;
        let line = Line::parse(older).unwrap();
        assert_eq!(line.start_micros(), Ok(1_764_858_808_123_456));
        assert_eq!(line.cause, Some(Cause::Open));
        let converted = r#"{"system":"sber","start":"1970-01-01T00:00:00.900Z","duration_ms":1,"outcome":"failure"}"#;
        assert_eq!(Line::parse(converted).unwrap().start_micros(), Ok(900_000));
        let unknown = Line::parse(r#"{"system":"s","start":1,"outcome":"maybe"}"#).unwrap_err();
        assert!(unknown.contains("unknown variant `maybe`"), "{unknown}");
        assert!(unknown.contains("`success`"), "{unknown}");
        let cut =
            Line::parse(r#"{"system":"s","start":1,"outcome":"failure","cut":"read_timeout"}"#)
                .unwrap()
                .entry()
                .unwrap_err();
        assert!(cut.starts_with("`cut`"), "{cut}");
        let far = Line::parse(r#"{"system":"s","start":1e30,"outcome":"failure"}"#).unwrap();
        assert!(far.start_micros().unwrap_err().starts_with("`start` 1e30"));
        assert!(Line::parse(r#"{"system":"s","start":1,"dur"#)
            .unwrap_err()
            .starts_with("truncated"));
    }
}
