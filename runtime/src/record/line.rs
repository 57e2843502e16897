//! A record as its JSON line, written by hand: the format is small and fixed, and the
//! core takes no JSON dependency for it.

use std::fmt::Write as _;
use std::time::SystemTime;

use crate::observer::Outcome;

/// Appends `text` as a JSON string, quotes included.
pub(super) fn string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Milliseconds since the Unix epoch, with microseconds: `1764858808123.456`.
pub(super) fn millis(out: &mut String, at: SystemTime) {
    let micros = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    let _ = write!(out, "{}.{:03}", micros / 1000, micros % 1000);
}

/// The start of a line: `{"system":"sber","start":1764858808123.456`.
pub(super) fn head(out: &mut String, system: &str, start: SystemTime) {
    out.push_str("{\"system\":");
    string(out, system);
    out.push_str(",\"start\":");
    millis(out, start);
}

/// A call's line, after [`head`]. A call `cut` short by the client's `read_timeout` is
/// written `"outcome":"timeout","cut":"read_timeout"`: it lasted at least that long.
pub(super) fn call(out: &mut String, duration: std::time::Duration, outcome: Outcome, cut: bool) {
    let micros = duration.as_micros();
    let verdict = if cut { "timeout" } else { outcome.as_str() };
    let _ = write!(
        out,
        ",\"duration_ms\":{}.{:03},\"outcome\":\"{verdict}\"",
        micros / 1000,
        micros % 1000,
    );
    if cut {
        out.push_str(",\"cut\":\"read_timeout\"");
    }
    if let Outcome::Rejected(cause) = outcome {
        let _ = write!(out, ",\"cause\":\"{}\"", cause.as_str());
    }
    out.push_str("}\n");
}

/// A transition's line, after [`head`]; one made in observe mode (what the breaker
/// would have done) ends with `"observing":true`.
pub(super) fn transition(
    out: &mut String,
    from: &str,
    to: &str,
    reason: &str,
    why: &str,
    observing: bool,
) {
    let _ = write!(
        out,
        ",\"transition\":\"{to}\",\"from\":\"{from}\",\"reason\":\"{reason}\",\"why\":"
    );
    string(out, why);
    if observing {
        out.push_str(",\"observing\":true");
    }
    out.push_str("}\n");
}

/// The limits' line, after [`head`]: `"read_timeout_ms":1500.000,"total_timeout_ms":2000.000`.
pub(super) fn limits(
    out: &mut String,
    read_timeout: std::time::Duration,
    total_timeout: std::time::Duration,
) {
    let (read, total) = (read_timeout.as_micros(), total_timeout.as_micros());
    let _ = writeln!(
        out,
        ",\"read_timeout_ms\":{}.{:03},\"total_timeout_ms\":{}.{:03}}}",
        read / 1000,
        read % 1000,
        total / 1000,
        total % 1000
    );
}

/// The line of observe mode turned on or off, after [`head`]: `"observing":true`.
pub(super) fn observing(out: &mut String, observing: bool) {
    let _ = writeln!(out, ",\"observing\":{observing}}}");
}
