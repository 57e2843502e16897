//! The default answer, one screen within [`WIDTH`] columns: per system, what the
//! settings it ran with did, then for each alternative, in words, whether it is better,
//! worse, the same or cannot be told apart on what an on-call engineer weighs (time to
//! fail fast in each incident, failing calls let through, healthy calls refused, time
//! callers waited), with both values (`≈` where estimated) and how sure: exact, on
//! every draw of the guessed answers, the difference's spread over the draws, or
//! cannot tell with why; and which recording would tell.

use std::fmt::Write as _;
use std::path::Path;

use crate::output::{counted, thousands, times};

use super::preamble::preamble;
use crate::output::span;
use outbound_guard::State;
use outbound_guard_replay::FigureKind as Figure;
use outbound_guard_replay::Hole;
use outbound_guard_replay::Recording;
use outbound_guard_replay::{Compared, Difference, Known, Subject, Told};
use outbound_guard_replay::{SystemReport, Variant};

/// The screen's width, in columns.
pub(crate) const WIDTH: usize = 100;

/// The label column of a verdict line.
const LABEL: usize = 28;

/// The verdict column.
const VERDICT: usize = 19;

/// What a verdict line weighs, in the order shown.
const WEIGHED: [Figure; 3] = [
    Figure::FailingLetThrough,
    Figure::HealthyRefused,
    Figure::Waited,
];

/// The recordings that tell what guessed answers leave estimated.
const TO_TELL: &str = "to tell what is estimated or cannot be told: record in observe mode \
    (cb_mode = \"observe\"), log at a proxy in front of the guard, or add another replica's \
    recording (--replica)";

/// The recordings that fill a recording's holes.
const TO_FILL: &str = "to tell what the holes leave out: record in the service (the recorder \
    writes each call its guard refused), in observe mode, or log at a proxy in front of the guard";

/// `text` folded at spaces to fit `width` columns, every line after the first indented
/// by `indent` spaces (the first is the caller's to indent).
pub(crate) fn wrap(text: &str, first: usize, indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut column = first;
    for word in glued(text) {
        let len = word.chars().count();
        if column > indent && column + 1 + len > width && !out.is_empty() {
            let _ = write!(out, "\n{:indent$}", "");
            column = indent;
        } else if !out.is_empty() {
            out.push(' ');
            column += 1;
        }
        out.push_str(&word);
        column += len;
    }
    out
}

/// The words of `text`, a unit kept with its number (`29.2 s`, `14:47:36.878 UTC`).
fn glued(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(' ') {
        let unit = [
            "s", "s;", "s,", "ms", "ms;", "ms,", "UTC", "UTC;", "UTC,", "UTC):",
        ];
        match words.last_mut() {
            Some(last) if unit.contains(&word) => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_owned()),
        }
    }
    words
}

/// A setting's label with a space after each comma (`read_timeout=5, total_timeout=6`),
/// so that a long list of keys folds within the width.
pub(crate) fn spaced(label: &str) -> String {
    label.split(',').collect::<Vec<_>>().join(", ")
}

/// One line of the screen, `indent` spaces in, folded within [`WIDTH`].
fn line(out: &mut String, indent: usize, text: &str) {
    let _ = writeln!(
        out,
        "{:indent$}{}",
        "",
        wrap(text, indent, indent + 2, WIDTH)
    );
}

/// A value of `subject` as the recording tells it: `≈` before an estimate; a time
/// as a span (`never` for a time to fast fail that never comes).
fn shown(t: &Told, subject: Subject) -> String {
    let about = if t.exact() { "" } else { "≈" };
    let time = matches!(subject, Subject::FastFail(_))
        || matches!(subject, Subject::Figure(f) if f.is_time());
    match t.value {
        u64::MAX => "never".to_owned(),
        v if time => format!("{about}{}", span(v)),
        v => format!(
            "{about}{}",
            thousands(usize::try_from(v).unwrap_or(usize::MAX))
        ),
    }
}

/// A difference over the draws, signed: `+1,043`, `−2.5 s`.
fn signed(d: i128, time: bool) -> String {
    let sign = if d < 0 { "−" } else { "+" };
    let size = u64::try_from(d.unsigned_abs()).unwrap_or(u64::MAX);
    if time {
        format!("{sign}{}", span(size))
    } else {
        format!(
            "{sign}{}",
            thousands(usize::try_from(size).unwrap_or(usize::MAX))
        )
    }
}

/// How sure a comparison is, in words, with both values where they differ or are
/// estimated: `exact`, `≈99 against 54, on all 19 draws`, `≈99 against ≈84; −12 to
/// +40` (the difference's spread over the draws), or why it cannot be told.
fn certainty(base: &Known, alternative: &Known, compared: Compared, subject: Subject) -> String {
    let (b, a) = match (base, alternative) {
        (Known::CannotTell(why), _) | (_, Known::CannotTell(why)) => return why.clone(),
        (Known::Told(b), Known::Told(a)) => (b, a),
    };
    let values = format!("{} against {}", shown(a, subject), shown(b, subject));
    let time = !matches!(subject, Subject::Figure(f) if !f.is_time());
    match (compared.verdict, compared.spread) {
        (Difference::Same, _) if b.exact() && a.exact() => "exact".into(),
        (_, None) if b.exact() && a.exact() => format!("exact: {values}"),
        (_, None) => format!(
            "{values}, estimated from {} guessed answers",
            thousands(a.guessed.max(b.guessed))
        ),
        (Difference::Same, Some((_, _, draws))) => format!("{values}, equal on all {draws} draws"),
        (Difference::Apart, Some((low, high, _))) => {
            format!("{values}; {} to {}", signed(low, time), signed(high, time))
        }
        (_, Some((_, _, draws))) => format!("{values}, on all {draws} draws"),
    }
}

/// A verdict line: its label, its word, and how sure, folded under the third column.
fn verdict_line(out: &mut String, label: &str, verdict: Difference, sure: &str) {
    let indent = 4 + LABEL + VERDICT;
    let _ = writeln!(
        out,
        "    {label:<LABEL$}{:<VERDICT$}{}",
        verdict.word(),
        wrap(sure, indent, indent, WIDTH)
    );
}

/// The incidents `numbers` (from 1) as a label: `fails fast in incident 2`,
/// `… in incidents 1, 3`, `… in 7 of 12 incidents`.
fn incidents_label(numbers: &[usize], of: usize) -> String {
    match numbers {
        [one] => format!("fails fast in incident {one}"),
        _ if numbers.len() == of && of > 4 => format!("fails fast in all {of} incidents"),
        _ if numbers.len() > 4 => format!("fails fast in {} of {of} incidents", numbers.len()),
        _ => {
            let list: Vec<String> = numbers.iter().map(ToString::to_string).collect();
            format!("fails fast in incidents {}", list.join(", "))
        }
    }
}

/// An alternative's verdict lines against the settings it ran with: label, verdict,
/// how sure.
fn judged(report: &SystemReport<'_>, alt: &Variant) -> Vec<(String, Difference, String)> {
    let base = &report.variants[0];
    let judge = |subject: Subject| {
        let (b, a, compared) = report.judged(base, alt, subject);
        (compared.verdict, certainty(&b, &a, compared, subject))
    };
    // Incidents with the same verdict, equally sure, share a line.
    let mut groups: Vec<(Difference, String, Vec<usize>)> = Vec::new();
    for i in 0..report.incidents.len() {
        let (v, sure) = judge(Subject::FastFail(i));
        match groups
            .iter_mut()
            .find(|(gv, gs, _)| *gv == v && *gs == sure)
        {
            Some(group) => group.2.push(i + 1),
            None => groups.push((v, sure, vec![i + 1])),
        }
    }
    let of = report.incidents.len();
    let mut lines: Vec<(String, Difference, String)> = groups
        .into_iter()
        .map(|(v, sure, numbers)| (incidents_label(&numbers, of), v, sure))
        .collect();
    for figure in WEIGHED {
        let (v, sure) = judge(Subject::Figure(figure));
        lines.push((figure.label().to_owned(), v, sure));
    }
    lines
}

/// An alternative against the settings it ran with; whether any of it rests on
/// guessed answers.
fn alternative(out: &mut String, report: &SystemReport<'_>, alt: &Variant) -> bool {
    let label = spaced(&alt.label);
    if let Some(why) = alt.cannot_tell.first() {
        line(out, 2, &format!("{label}: cannot tell: {why}"));
        return false;
    }
    let lines = judged(report, alt);
    if lines
        .iter()
        .all(|(_, v, sure)| *v == Difference::Same && sure == "exact")
    {
        line(out, 2, &format!("{label}: the same on each, exact"));
        return false;
    }
    line(
        out,
        2,
        &format!("{label}, against the settings it ran with:"),
    );
    for (label, v, sure) in &lines {
        verdict_line(out, label, *v, sure);
    }
    lines.iter().any(|(_, _, sure)| sure != "exact")
}

/// `opened 3 times`, `never opened`.
fn opened(n: usize) -> String {
    if n == 0 {
        "never opened".into()
    } else {
        format!("opened {}", times(n))
    }
}

/// `would have opened 3 times`, `would never have opened`.
fn would_open(n: usize) -> String {
    if n == 0 {
        "would never have opened".into()
    } else {
        format!("would have opened {}", times(n))
    }
}

/// A count of the settings it ran with as the recording tells it: `40` exact,
/// `≈1,722 ±310` estimated (the larger side of its interval), or `cannot tell`.
fn as_set_count(report: &SystemReport<'_>, figure: Figure) -> String {
    match report.known(&report.variants[0], Subject::Figure(figure)) {
        Known::Told(t) if t.exact() => thousands(usize::try_from(t.value).unwrap_or(usize::MAX)),
        Known::Told(t) => {
            let err = t.value.abs_diff(t.low).max(t.high.abs_diff(t.value));
            let n = |v: u64| thousands(usize::try_from(v).unwrap_or(usize::MAX));
            format!("≈{} ±{}", n(t.value), n(err))
        }
        Known::CannotTell(_) => "cannot tell".to_owned(),
    }
}

/// What the settings it ran with did, in one sentence: a count estimated marked `≈`
/// with its error; a count the recording cannot tell (one resting on its holes) left
/// out.
fn as_set(recording: &Recording, report: &SystemReport<'_>) -> String {
    let as_set = &report.variants[0];
    let mut text = format!("as set, replayed: {}", opened(as_set.openings().len()));
    let mut counts = Vec::new();
    let through = as_set_count(report, Figure::FailingLetThrough);
    if through != "cannot tell" {
        let calls = if through == "1" { "call" } else { "calls" };
        counts.push(format!("{through} failing {calls} let through"));
    }
    let refused = as_set_count(report, Figure::HealthyRefused);
    if refused != "cannot tell" {
        counts.push(format!("{refused} healthy refused"));
    }
    if !counts.is_empty() {
        let _ = write!(text, "; {}", counts.join(", "));
    }
    for (i, met) in as_set.incidents().iter().enumerate() {
        let _ = write!(
            text,
            "; incident {} ({}): {}",
            i + 1,
            recording.when(met.incident.start),
            met.to_fast_fail
                .map_or("never failed fast".into(), |t| format!(
                    "failed fast after {}",
                    span(t)
                ))
        );
    }
    text
}

/// The holes in words, for a system's header: `its traffic fell from 50 to 0.4 calls a
/// second for 1m 48s from …`; `when` says a time of the recording.
fn holes_described(holes: &[Hole], when: impl Fn(u64) -> String) -> String {
    let lasted: u64 = holes.iter().map(|h| h.end - h.start).sum();
    let first = &holes[0];
    let many = if holes.len() == 1 {
        String::new()
    } else {
        format!(" in {} stretches", holes.len())
    };
    format!(
        "its traffic fell from {:.0} to {:.1} calls a second for {}{many} from {}, while the \
         breaker it ran with was open: the recording has holes where that breaker refused \
         calls (a log taken behind an enforcing guard), and they are not in it",
        first.rate_before,
        first.rate_during,
        span(lasted),
        when(first.start),
    )
}

/// The system's first lines: its calls, incidents and breaker, what is guessed, and
/// its holes.
pub(super) fn system_header(out: &mut String, recording: &Recording, report: &SystemReport<'_>) {
    let openings = report
        .recording
        .transitions
        .iter()
        .filter(|t| matches!(t.to, State::Open | State::ForcedOpen))
        .count();
    let breaker = if report.recording.observed && report.unknown == 0 {
        format!(
            "its breaker observed ({}), refusing none",
            would_open(openings)
        )
    } else if openings == 0 && report.recording.limits.is_none() {
        // No line of the recorder's: an access log, whose breaker (if any) wrote nothing.
        "no breaker's transition in it".to_owned()
    } else {
        format!("its breaker {}", opened(openings))
    };
    let mut text = format!(
        "{}: {}, {}; {breaker}",
        report.name,
        counted(report.recording.calls.len(), "call", "calls"),
        counted(report.incidents.len(), "incident", "incidents"),
    );
    if report.unknown > 0 {
        let _ = write!(
            text,
            "; {} no recorded outcome (its guard refused {}): what {} change is estimated",
            counted(report.unknown, "call has", "calls have"),
            if report.unknown == 1 { "it" } else { "them" },
            if report.unknown == 1 {
                "it would"
            } else {
                "they would"
            },
        );
    }
    if report.filled > 0 {
        let _ = write!(
            text,
            "; {} answered by another replica's calls (--replica)",
            counted(report.filled, "call", "calls")
        );
    }
    if !report.holes.is_empty() {
        let _ = write!(
            text,
            "; {}",
            holes_described(&report.holes, |at| recording.when(at))
        );
    }
    line(out, 0, &text);
}

/// The screen: per system, what its settings did and each alternative's verdicts.
pub(crate) fn to_screen(
    path: &Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
) -> String {
    let mut out = wrap(&preamble(path, recording, reports), 0, 2, WIDTH);
    let mut guessed = false;
    for report in reports {
        out.push('\n');
        system_header(&mut out, recording, report);
        if let Some(why) = report.variants[0].cannot_tell.first() {
            line(&mut out, 2, &format!("as set: cannot tell: {why}"));
        } else {
            line(&mut out, 2, &as_set(recording, report));
        }
        for alt in &report.variants[1..] {
            // Where the recording has holes, what fills them is said once below.
            let rests_on_guesses = alternative(&mut out, report, alt);
            guessed |= rests_on_guesses && report.holes.is_empty();
        }
        if report.variants.len() == 1 {
            line(
                &mut out,
                2,
                "other settings: --compare KEY=VALUE (cb_failure_rate=0.5)",
            );
        }
    }
    if guessed {
        out.push('\n');
        line(&mut out, 0, TO_TELL);
    }
    if reports.iter().any(|r| !r.holes.is_empty()) {
        out.push('\n');
        line(&mut out, 0, TO_FILL);
    }
    out.push('\n');
    line(
        &mut out,
        0,
        "the numbers, their ranges and the openings: --detail; all of it: --json",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_folds_at_spaces_within_the_width_indenting_what_follows() {
        let text = "one two three four five six seven";
        assert_eq!(
            wrap(text, 0, 2, 14),
            "one two three\n  four five\n  six seven"
        );
        assert_eq!(wrap(text, 10, 10, 100), text);
        assert_eq!(
            wrap("over 29.2 s", 0, 2, 10),
            "over\n  29.2 s",
            "a unit stays with its number"
        );
        let long = "a".repeat(30);
        assert_eq!(
            wrap(&long, 0, 2, 10),
            long,
            "a word longer than the width stays whole"
        );
    }

    #[test]
    fn incidents_are_listed_while_few() {
        assert_eq!(incidents_label(&[2], 3), "fails fast in incident 2");
        assert_eq!(incidents_label(&[1, 3], 3), "fails fast in incidents 1, 3");
        assert_eq!(
            incidents_label(&[1, 2, 3, 4, 5], 5),
            "fails fast in all 5 incidents"
        );
        assert_eq!(
            incidents_label(&[1, 2, 3, 4, 6], 9),
            "fails fast in 5 of 9 incidents"
        );
    }
}
