//! A line of a recording as a type: one of its four kinds, each a struct of the fields
//! that kind has, written by serde field for field in the order declared here.

use std::borrow::Cow;

use serde::Serialize;

use crate::names::{Cause, Cut, Outcome};
use crate::number::{micros, millis};
use crate::start::Start;

/// One line of a recording: a call, a transition, the limits, or observe mode.
///
/// Written as the JSON object of its kind's fields, with no tag: the kind shows in which
/// fields a line has (`outcome` for a call, `transition` for a transition, …). Read by
/// [`Line::parse`] (or serde's `Deserialize`), which decides the kind by the same fields
/// and checks the values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Line<'a> {
    /// A guarded call.
    Call(Call<'a>),
    /// A transition of the breaker.
    Transition(Transition<'a>),
    /// The limits of the system's calls from then on.
    Limits(Limits<'a>),
    /// Observe mode turned on or off.
    Observing(Observing<'a>),
}

/// A call's line: `{"system":…,"start":…,"duration_ms":…,"outcome":…}`, with `cut` on a
/// timeout the client cut and `cause` on a refusal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call<'a> {
    /// The system called: the name of its `[systems.NAME]` table.
    pub system: Cow<'a, str>,
    /// When the call started.
    pub start: Start<'a>,
    /// How long it ran (or waited, refused by a full bulkhead), in milliseconds; absent
    /// counts as 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// How it ended.
    pub outcome: Outcome,
    /// What cut it short, on a `timeout` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// Why it was refused, on a `rejected` call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

impl Call<'_> {
    /// Microseconds it ran (or waited), at most `u32::MAX` (about 71 minutes: far beyond
    /// any `total_timeout`); 0 without a duration.
    pub fn duration_micros(&self) -> u32 {
        micros(self.duration_ms.unwrap_or(0.0)).min(u64::from(u32::MAX)) as u32
    }
}

/// A transition's line: `{"system":…,"start":…,"transition":…,"from":…,"reason":…,"why":…}`,
/// with `"observing":true` when made in observe mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transition<'a> {
    /// The system whose breaker it is.
    pub system: Cow<'a, str>,
    /// When it happened.
    pub start: Start<'a>,
    /// The state entered (`open`, `half_open`, `closed`, `forced_open`, `disabled`).
    #[serde(rename = "transition")]
    pub to: Cow<'a, str>,
    /// The state left (the recorder always writes it; a line made by hand may not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Cow<'a, str>>,
    /// Why (`failure_rate`, …, `manual` for an operator, `settings` for the file's
    /// `cb_mode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Cow<'a, str>>,
    /// Its log line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Cow<'a, str>>,
    /// Made in observe mode: what the breaker would have done (written only when true).
    #[serde(skip_serializing_if = "is_false")]
    pub observing: bool,
}

/// The limits' line: `{"system":…,"start":…,"read_timeout_ms":…,"total_timeout_ms":…}`,
/// with `bulkhead_limit` for an adaptive bulkhead's limit (a line of its own at each
/// change, the timeouts repeated: a reader that does not know the field reads the line
/// as the limits it always was).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limits<'a> {
    /// The system whose calls they are.
    pub system: Cow<'a, str>,
    /// When they took effect.
    pub start: Start<'a>,
    /// The `read_timeout` the system's calls run under from then on, in milliseconds.
    pub read_timeout_ms: f64,
    /// Their `total_timeout`, in milliseconds.
    pub total_timeout_ms: f64,
    /// An adaptive bulkhead's limit from then on: how many calls it admits (at least
    /// 1); absent for a fixed bulkhead, which admits its permits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bulkhead_limit: Option<u32>,
}

impl Limits<'_> {
    /// `read_timeout` in microseconds.
    pub fn read_micros(&self) -> u64 {
        micros(self.read_timeout_ms)
    }

    /// `total_timeout` in microseconds.
    pub fn total_micros(&self) -> u64 {
        micros(self.total_timeout_ms)
    }
}

/// Observe mode's line: `{"system":…,"start":…,"observing":true}` (`false`: turned off).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observing<'a> {
    /// The system whose breaker it is.
    pub system: Cow<'a, str>,
    /// When it was turned on or off.
    pub start: Start<'a>,
    /// Turned on (`true`) or off.
    pub observing: bool,
}

/// serde's `skip_serializing_if` for a flag written only when set.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes the field by reference
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl<'a> Line<'a> {
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
        Line::Call(Call {
            system: Cow::Borrowed(system),
            start: Start::Millis(millis(start_micros)),
            duration_ms: Some(millis(duration_micros)),
            outcome,
            cut,
            cause,
        })
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
        Line::Transition(Transition {
            system: Cow::Borrowed(system),
            start: Start::Millis(millis(at_micros)),
            to: Cow::Borrowed(to),
            from: Some(Cow::Borrowed(from)),
            reason: Some(Cow::Borrowed(reason)),
            why: Some(Cow::Borrowed(why)),
            observing,
        })
    }

    /// The limits' line: the system's calls run under these from `at_micros` on.
    #[must_use]
    pub fn limits(
        system: &'a str,
        at_micros: u64,
        read_micros: u64,
        total_micros: u64,
    ) -> Line<'a> {
        Line::Limits(Limits {
            system: Cow::Borrowed(system),
            start: Start::Millis(millis(at_micros)),
            read_timeout_ms: millis(read_micros),
            total_timeout_ms: millis(total_micros),
            bulkhead_limit: None,
        })
    }

    /// The limits' line with an adaptive bulkhead's `limit`: the system's calls run
    /// under these from `at_micros` on, at most `limit` at a time.
    #[must_use]
    pub fn bulkhead_limit(
        system: &'a str,
        at_micros: u64,
        read_micros: u64,
        total_micros: u64,
        limit: u32,
    ) -> Line<'a> {
        let mut line = Line::limits(system, at_micros, read_micros, total_micros);
        if let Line::Limits(limits) = &mut line {
            limits.bulkhead_limit = Some(limit);
        }
        line
    }

    /// The line of observe mode turned on or off at `at_micros`.
    #[must_use]
    pub fn observing(system: &'a str, at_micros: u64, observing: bool) -> Line<'a> {
        Line::Observing(Observing {
            system: Cow::Borrowed(system),
            start: Start::Millis(millis(at_micros)),
            observing,
        })
    }

    /// The system the line is about.
    pub fn system(&self) -> &str {
        match self {
            Line::Call(line) => &line.system,
            Line::Transition(line) => &line.system,
            Line::Limits(line) => &line.system,
            Line::Observing(line) => &line.system,
        }
    }

    /// When the call started, or when the transition or setting took effect.
    pub fn start(&self) -> &Start<'a> {
        match self {
            Line::Call(line) => &line.start,
            Line::Transition(line) => &line.start,
            Line::Limits(line) => &line.start,
            Line::Observing(line) => &line.start,
        }
    }

    /// The line's `start`, in microseconds since the Unix epoch ([`Start::micros`]).
    ///
    /// # Errors
    ///
    /// Not a number of milliseconds between 1970 and the year 10000, nor an RFC 3339 time
    /// (never for a line [`Line::parse`] returned: it checks the start).
    pub fn start_micros(&self) -> Result<i64, String> {
        self.start().micros()
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
}
