//! `--detail`: the numbers behind the screen, a block per system and setting. Each
//! figure is its value; one that rests on guessed answers says how many, and, where
//! every way of answering them was replayed, the range that holds every way (never the
//! few ways a replay happened to reach); one whose range spans nearly every call says
//! "cannot tell".
//! Openings fed by guessed answers are marked `(guessed)`; those resting on what a
//! recording's holes hide, `(rests on the holes)`.

use std::fmt::Write as _;
use std::ops::RangeInclusive;
use std::path::Path;

use crate::output::{counted, thousands};

use super::preamble::preamble;
use super::screen::{spaced, system_header, wrap, WIDTH};
use crate::output::span;
use outbound_guard_replay::FigureKind as Figure;
use outbound_guard_replay::Recording;
use outbound_guard_replay::{Known, Subject};
use outbound_guard_replay::{SystemReport, Variant};

/// The label column.
const LABEL: usize = 30;

/// Openings listed per setting; past it, how many in all.
const OPENINGS_SHOWN: usize = 10;

/// A figure's value in its unit: a count, or a time.
fn amount(figure: Figure, value: usize) -> String {
    if figure.is_time() {
        span(value as u64)
    } else {
        thousands(value)
    }
}

/// A range every way was replayed for, `54–1,511`, or `None` where it is one value.
fn range(figure: Figure, r: RangeInclusive<usize>) -> Option<String> {
    let (low, high) = r.into_inner();
    (low != high).then(|| format!("{}–{}", amount(figure, low), amount(figure, high)))
}

/// A time to fast fail (`None`: never).
fn fast(t: Option<u64>) -> String {
    t.map_or_else(|| "never".into(), span)
}

/// One figure's cell: `33`, `33 (5 guessed)`, `33 (5 guessed; every way 30–40)`, or
/// `cannot tell: …`.
fn cell(report: &SystemReport<'_>, variant: &Variant, figure: Figure) -> String {
    match report.known(variant, Subject::Figure(figure)) {
        Known::CannotTell(why) => format!("cannot tell: {why}"),
        Known::Told(t) if t.exact() => amount(figure, usize::try_from(t.value).unwrap_or(0)),
        Known::Told(t) => {
            let value = amount(figure, usize::try_from(t.value).unwrap_or(usize::MAX));
            let proven = variant.proven(figure).and_then(|p| range(figure, p));
            match proven {
                Some(r) => format!("{value} ({} guessed; every way {r})", thousands(t.guessed)),
                None => format!("{value} ({} guessed)", thousands(t.guessed)),
            }
        }
    }
}

/// Incident `i`'s time to fast fail, as [`cell`] says a figure.
fn fast_cell(report: &SystemReport<'_>, variant: &Variant, i: usize) -> String {
    match report.known(variant, Subject::FastFail(i)) {
        Known::CannotTell(why) => format!("cannot tell: {why}"),
        Known::Told(t) if t.exact() => fast((t.value != u64::MAX).then_some(t.value)),
        Known::Told(t) => {
            let proven = variant.proven_fast_fail(i);
            let value = fast((t.value != u64::MAX).then_some(t.value));
            match proven {
                Some(r) if r.start() != r.end() => format!(
                    "{value} ({} guessed; every way {}–{})",
                    thousands(t.guessed),
                    fast((*r.start() != u64::MAX).then_some(*r.start())),
                    fast((*r.end() != u64::MAX).then_some(*r.end()))
                ),
                _ => format!("{value} ({} guessed)", thousands(t.guessed)),
            }
        }
    }
}

/// A row: its label, and its value folded under the value column.
fn row(out: &mut String, label: &str, value: &str) {
    let indent = 2 + LABEL;
    let _ = writeln!(
        out,
        "  {label:<LABEL$}{}",
        wrap(value, indent, indent, WIDTH)
    );
}

/// How the ranges were found.
fn ways(variant: &Variant) -> String {
    if variant.every_way() {
        format!(
            "every way replayed ({})",
            counted(variant.ways_replayed(), "replay", "replays")
        )
    } else {
        format!(
            "{} replayed, not every one; each figure the estimate with its error",
            counted(variant.ways_replayed(), "way", "ways")
        )
    }
}

/// One setting's block.
fn setting(out: &mut String, recording: &Recording, report: &SystemReport<'_>, v: &Variant) {
    let heading = format!("{}, {}:", report.name, spaced(&v.label));
    let _ = writeln!(out, "\n{}", wrap(&heading, 0, 2, WIDTH));
    if !v.cannot_tell.is_empty() {
        for why in &v.cannot_tell {
            row(out, "cannot tell", why);
        }
        return;
    }
    for figure in Figure::ALL {
        row(out, figure.label(), &cell(report, v, figure));
    }
    if report.unknown > 0 {
        row(
            out,
            "guessed calls let run",
            &thousands(v.guessed(Figure::Openings)),
        );
        row(out, "ranges", &ways(v));
    }
    for (i, met) in v.incidents().iter().enumerate() {
        let incident = met.incident;
        let _ = writeln!(
            out,
            "  incident {} at {} ({}, {} failing):",
            i + 1,
            recording.when(incident.start),
            span(incident.end - incident.start),
            thousands(incident.failing_calls as usize)
        );
        row(out, "  to fast fail", &fast_cell(report, v, i));
        let through = match met.guessed {
            _ if !report.holes.is_empty() && !v.ran_with => {
                format!("cannot tell: {}", Known::IN_HOLES)
            }
            0 => thousands(v.incident_through(i)),
            g => format!(
                "{} ({} guessed)",
                thousands(v.incident_through(i)),
                thousands(g)
            ),
        };
        row(out, "  failing calls let through", &through);
    }
    let openings = v.openings();
    for o in openings.iter().take(OPENINGS_SHOWN) {
        let mark = match (o.guessed, !v.ran_with && report.rests_on_holes(o.at)) {
            (_, true) => " (rests on the holes)",
            (true, false) => " (guessed)",
            (false, false) => "",
        };
        let text = format!("{}  {}{mark}", recording.when(o.at), o.why);
        let _ = writeln!(out, "  opened {}", wrap(&text, 9, 11, WIDTH));
    }
    if openings.len() > OPENINGS_SHOWN {
        let _ = writeln!(
            out,
            "  … {} in all",
            counted(openings.len(), "opening", "openings")
        );
    }
}

/// The numbers: a block per system and setting.
pub(crate) fn to_detail(
    path: &Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
) -> String {
    let mut out = wrap(&preamble(path, recording, reports), 0, 2, WIDTH);
    for report in reports {
        out.push('\n');
        system_header(&mut out, recording, report);
        for v in &report.variants {
            setting(&mut out, recording, report, v);
        }
    }
    out
}
