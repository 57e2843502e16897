//! Reading a line: the JSON object as it comes (every field any kind has, each
//! optional), then its kind, decided by which fields it has, and its values checked.
//!
//! The kind is decided by fields rather than tried kind after kind (serde's
//! `untagged`): a line with a field of two kinds reads as the first that fits, as it
//! always has (a transition if it has `transition`, then observe mode if it has
//! `observing` and no `outcome`, then the limits if it has both of theirs and no
//! `outcome`, else a call), and a bad line is told what is wrong with it rather than
//! that it matches no kind.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

use crate::line::{Call, Limits, Line, Observing, Transition};
use crate::names::{Cause, Cut, Outcome};
use crate::number::shown;
use crate::start::Start;

/// A line as it comes: every field of every kind, each optional; other fields are
/// ignored (a converter may keep the original status beside them).
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow)]
    system: Cow<'a, str>,
    #[serde(borrow)]
    start: Start<'a>,
    #[serde(default)]
    duration_ms: Option<f64>,
    #[serde(default)]
    outcome: Option<Outcome>,
    #[serde(default)]
    cut: Option<Cut>,
    #[serde(default)]
    cause: Option<Cause>,
    #[serde(default, borrow)]
    transition: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    from: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    why: Option<Cow<'a, str>>,
    #[serde(default)]
    observing: Option<bool>,
    #[serde(default)]
    read_timeout_ms: Option<f64>,
    #[serde(default)]
    total_timeout_ms: Option<f64>,
    #[serde(default)]
    bulkhead_limit: Option<u32>,
}

/// A limit's milliseconds, checked: between 0 and a day.
fn limit(ms: f64, key: &str) -> Result<f64, String> {
    if ms.is_finite() && (0.0..=86_400_000.0).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!(
            "`{key}` {}: expected milliseconds between 0 and a day",
            shown(ms)
        ))
    }
}

impl<'a> Fields<'a> {
    /// The line these fields make, its values checked in the order a reader meets
    /// them: the start, the system, then the kind's own.
    fn line(self) -> Result<Line<'a>, String> {
        self.start.micros()?;
        if self.system.is_empty() {
            return Err("`system` is empty".into());
        }
        let Fields {
            system,
            start,
            duration_ms,
            outcome,
            cut,
            cause,
            transition,
            from,
            reason,
            why,
            observing,
            read_timeout_ms,
            total_timeout_ms,
            bulkhead_limit,
        } = self;
        if let Some(to) = transition {
            return Ok(Line::Transition(Transition {
                system,
                start,
                to,
                from,
                reason,
                why,
                observing: observing == Some(true),
            }));
        }
        if let (None, Some(observing)) = (outcome, observing) {
            return Ok(Line::Observing(Observing {
                system,
                start,
                observing,
            }));
        }
        if let (None, Some(read), Some(total)) = (outcome, read_timeout_ms, total_timeout_ms) {
            return Ok(Line::Limits(Limits {
                system,
                start,
                read_timeout_ms: limit(read, "read_timeout_ms")?,
                total_timeout_ms: limit(total, "total_timeout_ms")?,
                bulkhead_limit: match bulkhead_limit {
                    Some(0) => return Err("`bulkhead_limit` 0: expected at least 1".into()),
                    other => other,
                },
            }));
        }
        let outcome = outcome.ok_or("neither `outcome`, `transition` nor `observing`")?;
        if cut.is_some() && outcome != Outcome::Timeout {
            return Err("`cut` \"read_timeout\": expected on a `timeout` only".into());
        }
        if let Some(duration) = duration_ms {
            if !duration.is_finite() || duration < 0.0 {
                return Err(format!(
                    "`duration_ms` {}: expected milliseconds ≥ 0",
                    shown(duration)
                ));
            }
        }
        Ok(Line::Call(Call {
            system,
            start,
            duration_ms,
            outcome,
            cut,
            cause,
        }))
    }
}

impl<'a> Line<'a> {
    /// Reads one line (without its newline). The error names the column within it,
    /// never a line: the reader numbers its lines itself.
    ///
    /// A line it returns is checked: its `start` reads ([`Line::start_micros`]), its
    /// `system` is not empty, a call's duration is not negative, a `cut` is on a
    /// `timeout`, limits are between 0 and a day.
    ///
    /// # Errors
    ///
    /// Not JSON, not an object of this shape, or cut short (`truncated: …`); a value
    /// above that is wrong (its field named); no field that says its kind
    /// (`outcome`, `transition`, `observing`, or both limits).
    pub fn parse(text: &'a str) -> Result<Line<'a>, String> {
        let fields: Fields<'a> = serde_json::from_str(text).map_err(|e| {
            // serde's own position ("at line 1 column 62") counts within this line.
            let message = e.to_string();
            let what = message.split(" at line ").next().unwrap_or(&message);
            if e.is_eof() {
                format!("truncated: {what}")
            } else {
                format!("not a record: {what} (column {})", e.column())
            }
        })?;
        fields.line()
    }
}

/// The same reading as [`Line::parse`], for a line inside other serde data.
impl<'de: 'a, 'a> Deserialize<'de> for Line<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Fields::deserialize(deserializer)?
            .line()
            .map_err(serde::de::Error::custom)
    }
}
