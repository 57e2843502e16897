//! Reading a recording: one JSON object a line (the format of `docs/recording.md`,
//! defined once in `outbound-guard-recording`, which the recorder writes with),
//! calls grouped by system and put in start order, transitions kept aside, and every
//! line that cannot be read reported with its number.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::time::SystemTime;

use outbound_guard::{ManualAction, State};
use outbound_guard_recording::{self as format, Cut, Line, Outcome};

use crate::transitions::BreakerTransition;

/// How a recorded call ended, as the guard that recorded it judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Success,
    Failure,
    Slow,
    Timeout,
    /// Cut short by the client's `read_timeout` (`"outcome":"timeout","cut":"read_timeout"`):
    /// no answer within its duration, and how it would have ended later is not known.
    Cut,
    Cancelled,
    /// Refused by the recording's guard: it never ran, so how the upstream would have
    /// answered is not known.
    Rejected,
}

impl Recorded {
    /// A call's outcome as the format gives it: a `timeout` the client cut is [`Recorded::Cut`].
    fn of(call: &format::Call<'_>) -> Recorded {
        match (call.outcome, call.cut) {
            (Outcome::Timeout, Some(Cut::ReadTimeout)) => Recorded::Cut,
            (Outcome::Success, _) => Recorded::Success,
            (Outcome::Failure, _) => Recorded::Failure,
            (Outcome::Slow, _) => Recorded::Slow,
            (Outcome::Timeout, _) => Recorded::Timeout,
            (Outcome::Cancelled, _) => Recorded::Cancelled,
            (Outcome::Rejected, _) => Recorded::Rejected,
        }
    }

    /// Whether the upstream was failing for this call (an error, too slow, no answer).
    pub fn failing(self) -> bool {
        matches!(
            self,
            Recorded::Failure | Recorded::Slow | Recorded::Timeout | Recorded::Cut
        )
    }
}

/// One recorded call, compact: a day of ten million fits in memory.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// Microseconds since the recording's first line.
    pub start: u64,
    /// Microseconds it ran (or waited, refused by a full bulkhead).
    pub duration: u32,
    pub outcome: Recorded,
}

/// A transition line as read: its state left (where it says), its state entered, its
/// reason and its log line.
struct Moved {
    from: Option<State>,
    to: State,
    reason: String,
    why: String,
}

/// A state by the name the recorder writes: `closed`, `open`, `half_open`,
/// `forced_open`, `disabled`.
fn state_named(name: &str) -> Result<State, String> {
    Ok(match name {
        "closed" => State::Closed,
        "open" => State::Open,
        "half_open" => State::HalfOpen,
        "forced_open" => State::ForcedOpen,
        "disabled" => State::Disabled,
        other => {
            return Err(format!(
                "unknown state `{other}` (closed, open, half_open, forced_open, disabled)"
            ))
        }
    })
}

/// One system's part of a recording.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct SystemRecording {
    /// In start order.
    pub calls: Vec<Call>,
    /// Its breaker's transitions, in order.
    pub transitions: Vec<BreakerTransition>,
    /// What an operator or the settings file's `cb_mode` did to its breaker (a
    /// transition whose reason is `manual` or `settings`), with their times (µs), in
    /// order: a replay does them too.
    pub(crate) actions: Vec<(u64, ManualAction)>,
    /// Whether its breaker was in observe mode (`cb_mode = "observe"`) at some time of
    /// the recording: a line `"observing":true`, or a transition marked so. Its
    /// transitions are then what it would have done, and it refused no call while
    /// observing.
    pub observed: bool,
    /// The longest `read_timeout` and `total_timeout` its calls were allowed (µs), from
    /// the recorder's limits lines; `None` where the recording has none.
    pub limits: Option<(u64, u64)>,
}

/// A recording, read.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Recording {
    /// The first line's start, as a time of day: time 0 of every figure.
    pub origin: Option<SystemTime>,
    pub systems: BTreeMap<String, SystemRecording>,
    /// Lines that could not be read, with their number and why (skipped).
    pub bad_lines: Vec<(usize, String)>,
    /// How many calls were out of start order in the file (put in order).
    pub out_of_order: usize,
    /// The line with the earliest start, and the one with the latest (1 for the first).
    pub first_line: usize,
    pub last_line: usize,
}

/// One system's lines as read: calls (start in µs since 1970, duration in µs, outcome)
/// and transitions, in file order.
type Raw = (
    Vec<(i64, u32, Recorded)>,
    Vec<(i64, Moved)>,
    bool,
    Option<(u64, u64)>,
);

impl Recording {
    /// Reads a recording: the recorder's JSON lines (decompress a `.gz` first). With
    /// `strict`, the first line that cannot be read is an error; otherwise it is skipped
    /// and listed in `bad_lines`.
    ///
    /// # Errors
    ///
    /// The line that cannot be read (its number and why) with `strict`; a failed read
    /// either way.
    pub fn read(input: impl BufRead, strict: bool) -> Result<Recording, String> {
        read(input, strict)
    }
}

/// Reads a recording. With `strict`, the first line that cannot be read is an error
/// (its number and why); otherwise it is skipped and listed in `bad_lines`. A read that
/// fails (a directory, a disk error) is an error either way: the rest cannot be read.
///
/// # Errors
///
/// The line that cannot be read (its number and why) with `strict`; a failed read
/// either way.
pub(crate) fn read(mut input: impl BufRead, strict: bool) -> Result<Recording, String> {
    let mut recording = Recording::default();
    // Starts in µs since 1970, before they are made relative to the first.
    let mut raw: BTreeMap<String, Raw> = BTreeMap::new();
    let mut first: Option<i64> = None;
    let mut last: Option<i64> = None;
    let mut bytes = Vec::new();
    let mut number = 0;
    loop {
        bytes.clear();
        match input.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => number += 1,
            Err(e) => return Err(format!("line {}: cannot be read: {e}", number + 1)),
        }
        let parsed = match std::str::from_utf8(&bytes) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => parse_line(line),
            Err(e) => Err(format!("not UTF-8 text (byte {})", e.valid_up_to() + 1)),
        };
        match parsed {
            Ok((system, at, entry)) => {
                if first.is_none_or(|f| at < f) {
                    first = Some(at);
                    recording.first_line = number;
                }
                if last.is_none_or(|l| at > l) {
                    last = Some(at);
                    recording.last_line = number;
                }
                add(&mut raw, system, at, entry);
            }
            Err(why) => {
                if strict {
                    return Err(format!("line {number}: {why} (--strict)"));
                }
                recording.bad_lines.push((number, why));
            }
        }
    }
    let first = first.unwrap_or(0);
    recording.origin = u64::try_from(first)
        .ok()
        .map(|us| SystemTime::UNIX_EPOCH + std::time::Duration::from_micros(us));
    for (system, raw) in raw {
        if let Some(part) = in_order(raw, first, &mut recording.out_of_order) {
            recording.systems.insert(system, part);
        }
    }
    Ok(recording)
}

/// One line's `entry` of `system`, starting at `at`, into its part of `raw`.
fn add(raw: &mut BTreeMap<String, Raw>, system: String, at: i64, entry: Entry) {
    let (calls, transitions, observed, limits) = match raw.get_mut(system.as_str()) {
        Some(entry) => entry,
        None => raw.entry(system).or_default(),
    };
    match entry {
        Entry::Call(duration, outcome) => calls.push((at, duration, outcome)),
        Entry::Transition(t, observing) => {
            *observed |= observing;
            transitions.push((at, t));
        }
        Entry::Observing(observing) => *observed |= observing,
        Entry::Limits(read, total) => {
            let (r, t) = limits.unwrap_or((0, 0));
            *limits = Some((r.max(read), t.max(total)));
        }
    }
}

/// A system's lines as read, in start order and timed from `first` (µs since 1970),
/// its calls out of order counted into `out_of_order`; `None` for a system with only
/// its limits or its mode (configured, never called).
fn in_order(raw: Raw, first: i64, out_of_order: &mut usize) -> Option<SystemRecording> {
    let (mut calls, mut transitions, observed, limits) = raw;
    if calls.is_empty() && transitions.is_empty() {
        return None;
    }
    *out_of_order += calls.windows(2).filter(|w| w[1].0 < w[0].0).count();
    calls.sort_by_key(|c| c.0);
    transitions.sort_by_key(|t| t.0);
    let since = |at: i64| u64::try_from(at - first).unwrap_or(0);
    let actions = transitions
        .iter()
        .filter(|(_, t)| t.reason == "manual" || t.reason == "settings")
        .filter_map(|(at, t)| {
            let action = match t.to {
                State::ForcedOpen => ManualAction::ForceOpen,
                State::Disabled => ManualAction::Disable,
                State::Closed => ManualAction::Reset,
                _ => return None,
            };
            Some((since(*at), action))
        })
        .collect();
    let mut before = State::Closed;
    Some(SystemRecording {
        calls: calls
            .into_iter()
            .map(|(at, duration, outcome)| Call {
                start: since(at),
                duration,
                outcome,
            })
            .collect(),
        transitions: transitions
            .into_iter()
            .map(|(at, t)| {
                let from = t.from.unwrap_or(before);
                before = t.to;
                BreakerTransition {
                    at: since(at),
                    from,
                    to: t.to,
                    open: None,
                    why: t.why,
                    guessed: false,
                }
            })
            .collect(),
        actions,
        observed,
        limits,
    })
}

fn parse_line(line: &str) -> Result<(String, i64, Entry), String> {
    let parsed = Line::parse(line)?;
    let at = parsed.start_micros()?;
    let owned = |text: Option<Cow<'_, str>>| text.map(Cow::into_owned).unwrap_or_default();
    Ok(match parsed {
        Line::Call(call) => {
            let entry = Entry::Call(call.duration_micros(), Recorded::of(&call));
            (call.system.into_owned(), at, entry)
        }
        Line::Transition(t) => {
            let transition = Moved {
                from: t.from.as_deref().map(state_named).transpose()?,
                to: state_named(&t.to)?,
                reason: owned(t.reason),
                why: owned(t.why),
            };
            let entry = Entry::Transition(transition, t.observing);
            (t.system.into_owned(), at, entry)
        }
        Line::Observing(o) => (o.system.into_owned(), at, Entry::Observing(o.observing)),
        Line::Limits(limits) => {
            let entry = Entry::Limits(limits.read_micros(), limits.total_micros());
            (limits.system.into_owned(), at, entry)
        }
    })
}

enum Entry {
    Call(u32, Recorded),
    /// A transition, and whether it was made in observe mode.
    Transition(Moved, bool),
    /// Observe mode turned on (`true`) or off.
    Observing(bool),
    /// The limits from then on: `read_timeout` and `total_timeout`, in µs.
    Limits(u64, u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_calls_in_start_order_and_bad_lines_are_numbered() {
        let text = r#"{"system":"sber","start":1000.5,"duration_ms":12.25,"outcome":"success"}
{"system":"sber","start":"1970-01-01T00:00:00.900Z","duration_ms":1,"outcome":"failure"}
not json

{"system":"sber","start":1001,"outcome":"maybe"}
{"system":"sber","start":1002,"transition":"open","from":"closed","why":"sber opened"}
{"system":"customer","start":1003,"duration_ms":0,"outcome":"rejected","cause":"open"}
{"system":"sber","start":1004,"duration_ms":"#;
        let recording = read(text.as_bytes(), false).unwrap();
        let lines: Vec<usize> = recording.bad_lines.iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, [3, 5, 8]);
        assert!(
            recording.bad_lines[2].1.starts_with("truncated"),
            "{:?}",
            recording.bad_lines
        );
        assert_eq!(recording.out_of_order, 1);
        let sber = &recording.systems["sber"];
        assert_eq!(sber.calls[0].start, 0);
        assert_eq!(sber.calls[0].outcome, Recorded::Failure);
        assert_eq!(sber.calls[1].start, 100_500);
        assert_eq!(sber.calls[1].duration, 12_250);
        assert_eq!(sber.transitions[0].at, 102_000);
        assert_eq!(
            recording.systems["customer"].calls[0].outcome,
            Recorded::Rejected
        );
        let strict = read(text.as_bytes(), true).unwrap_err();
        // Limits, observe mode and a cut call; a system with nothing but its limits is
        // one the service never called.
        let text = r#"{"system":"sber","start":1000,"read_timeout_ms":100.000,"total_timeout_ms":200.000}
{"system":"idle","start":1000,"read_timeout_ms":100.000,"total_timeout_ms":200.000}
{"system":"sber","start":1000,"observing":true}
{"system":"sber","start":1001,"duration_ms":100.5,"outcome":"timeout","cut":"read_timeout"}
{"system":"sber","start":1002,"duration_ms":200,"outcome":"timeout"}
{"system":"sber","start":1003,"duration_ms":1,"outcome":"failure","cut":"read_timeout"}"#;
        let recording = read(text.as_bytes(), false).unwrap();
        assert_eq!(recording.systems.keys().collect::<Vec<_>>(), ["sber"]);
        let sber = &recording.systems["sber"];
        assert!(sber.observed);
        assert_eq!(sber.limits, Some((100_000, 200_000)));
        let outcomes: Vec<Recorded> = sber.calls.iter().map(|c| c.outcome).collect();
        assert_eq!(outcomes, [Recorded::Cut, Recorded::Timeout]);
        assert_eq!(recording.bad_lines.len(), 1);
        assert!(
            recording.bad_lines[0].1.starts_with("`cut`"),
            "{:?}",
            recording.bad_lines
        );
        assert!(strict.starts_with("line 3: not a record"), "{strict}");
    }

    #[test]
    fn transitions_read_as_the_runtimes_states_and_an_operators_as_actions() {
        let text = r#"{"system":"sber","start":1000,"transition":"open","from":"closed","reason":"failure_rate","why":"sber opened"}
{"system":"sber","start":1001,"transition":"half_open"}
{"system":"sber","start":1002,"transition":"forced_open","from":"half_open","reason":"manual"}
{"system":"sber","start":1003,"transition":"ajar","from":"closed"}
{"system":"sber","start":1004,"transition":"closed","from":"forced_open","reason":"manual"}"#;
        let recording = read(text.as_bytes(), false).unwrap();
        let sber = &recording.systems["sber"];
        let moves: Vec<(u64, State, State)> = sber
            .transitions
            .iter()
            .map(|t| (t.at, t.from, t.to))
            .collect();
        // A line without `from` left the state the one before it entered.
        assert_eq!(
            moves,
            [
                (0, State::Closed, State::Open),
                (1_000, State::Open, State::HalfOpen),
                (2_000, State::HalfOpen, State::ForcedOpen),
                (4_000, State::ForcedOpen, State::Closed),
            ]
        );
        assert_eq!(sber.transitions[0].why, "sber opened");
        assert_eq!(
            sber.actions,
            [
                (2_000, ManualAction::ForceOpen),
                (4_000, ManualAction::Reset)
            ]
        );
        assert_eq!(recording.bad_lines.len(), 1);
        assert_eq!(recording.bad_lines[0].0, 4);
        assert!(
            recording.bad_lines[0].1.starts_with("unknown state `ajar`"),
            "{:?}",
            recording.bad_lines
        );
    }
}
