//! The figures of `replay` as text: a table per system, settings side by side, or JSON.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use crate::output::{counted, thousands, times};

use super::engine::Replay;
use super::figures::{Bounds, FastFailRange, Figures, Incident, Proof, Range};
use super::recording::{Recording, SystemRecording};

/// One setting's replay of one system.
pub(crate) struct Variant {
    /// `as set`, or the changed key: `cb_failure_rate=0.2`.
    pub(crate) label: String,
    /// With the calls without a recorded outcome answered by the estimate.
    pub(crate) figures: Figures,
    /// Each figure over every way of answering them.
    pub(crate) bounds: Bounds,
    pub(crate) replay: Replay,
    /// Replays made of this setting (the estimate's, and each way of answering).
    pub(crate) replays: usize,
    /// Why the recording cannot tell this setting (its figures are then not given);
    /// empty when it can.
    pub(crate) cannot_tell: Vec<String>,
}

/// One system's replays.
pub(crate) struct SystemReport<'a> {
    pub(crate) name: String,
    pub(crate) recording: &'a SystemRecording,
    pub(crate) incidents: Vec<Incident>,
    /// Its calls without a recorded outcome (refused by the recording's guard).
    pub(crate) unknown: usize,
    /// Its calls without a recorded outcome that another replica's calls answered
    /// (`--replica`): no longer without one.
    pub(crate) filled: usize,
    pub(crate) variants: Vec<Variant>,
}

/// How long reading and replaying took, for the throughput line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) read: Duration,
    pub(crate) replay: Duration,
}

/// A time of the recording (µs since its start) as a time of day, to the millisecond.
pub(crate) fn when(recording: &Recording, at: u64) -> String {
    let origin = recording.origin.unwrap_or(SystemTime::UNIX_EPOCH);
    let text = humantime::format_rfc3339_millis(origin + Duration::from_micros(at)).to_string();
    text.replace('T', " ").trim_end_matches('Z').to_owned() + " UTC"
}

/// A span in words: `850 ms`, `12.3 s`, `4m 10s`.
pub(crate) fn span(micros: u64) -> String {
    let d = Duration::from_micros(micros);
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if d < Duration::from_secs(120) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
    }
}

fn total_calls(reports: &[SystemReport<'_>]) -> usize {
    reports.iter().map(|r| r.recording.calls.len()).sum()
}

/// The calls replayed, over every setting and way of guessing.
fn replayed(reports: &[SystemReport<'_>]) -> usize {
    reports
        .iter()
        .map(|r| r.recording.calls.len() * r.variants.iter().map(|v| v.replays).sum::<usize>())
        .sum()
}

/// A count with its range and how many of its calls were guessed: `33`, or
/// `33 (5 guessed; 30–40)`; past the budget, with the range every way lies in:
/// `33 (5 guessed; 30–40 replayed, 12–61 possible)`.
fn bounded(value: usize, range: Range, possible: Option<Range>, guessed: Option<usize>) -> String {
    let guessed = guessed.filter(|g| *g > 0);
    let text = |r: Range| {
        if r.low == r.high {
            thousands(r.low)
        } else {
            format!("{}–{}", thousands(r.low), thousands(r.high))
        }
    };
    let range = match possible {
        Some(possible) if possible.low != possible.high => {
            format!("{} replayed, {} possible", text(range), text(possible))
        }
        _ if range.low == range.high => String::new(),
        _ => text(range),
    };
    match (guessed, range.is_empty()) {
        (None, true) => thousands(value),
        (Some(g), true) => format!("{} ({} guessed)", thousands(value), thousands(g)),
        (Some(g), false) => format!("{} ({} guessed; {range})", thousands(value), thousands(g)),
        (None, false) => format!("{} ({range})", thousands(value)),
    }
}

/// How a setting's ranges were found: `every way (12 replays)`, or
/// `4,096 ways replayed, not every one`.
fn proof(proof: Proof) -> String {
    if proof.exhaustive {
        format!("every way ({})", counted(proof.paths, "replay", "replays"))
    } else {
        format!(
            "{} replayed, not every one",
            counted(proof.paths, "way", "ways")
        )
    }
}

/// A time to fast fail with how many guessed answers the breaker saw before it, and
/// its range: `413 ms`, or `413 ms (3 guessed; 112 ms–never)`; past the budget, with
/// the range every way lies in (`… 112 ms–never replayed, 40 ms–never possible`).
fn fast_fail(
    value: Option<u64>,
    range: FastFailRange,
    possible: Option<FastFailRange>,
    guessed: usize,
) -> String {
    let text = |t: Option<u64>| t.map_or("never".into(), span);
    let texts = |r: FastFailRange| {
        if r.soonest == r.latest {
            text(r.latest)
        } else {
            format!("{}–{}", text(r.soonest), text(r.latest))
        }
    };
    let guessed = if guessed > 0 {
        format!("{} guessed", thousands(guessed))
    } else {
        String::new()
    };
    let exact = |r: FastFailRange| r.soonest == r.latest && r.latest == value;
    let range = match possible {
        Some(possible) if !exact(possible) => {
            format!("{} replayed, {} possible", texts(range), texts(possible))
        }
        _ if exact(range) => String::new(),
        _ => format!("{}–{}", text(range.soonest), text(range.latest)),
    };
    match (guessed.is_empty(), range.is_empty()) {
        (true, true) => text(value),
        (false, false) => format!("{} ({guessed}; {range})", text(value)),
        _ => format!("{} ({guessed}{range})", text(value)),
    }
}

fn header(
    path: &Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
    timing: Timing,
) -> String {
    let calls = total_calls(reports);
    let last = reports
        .iter()
        .filter_map(|r| r.recording.calls.last().map(|c| c.start))
        .max()
        .unwrap_or(0);
    let runs: usize = reports
        .iter()
        .flat_map(|r| r.variants.iter().map(|v| v.replays))
        .sum();
    let replayed = replayed(reports);
    let per_call = timing.replay.as_secs_f64() * 1e9 / replayed.max(1) as f64;
    let mut out = format!(
        "{}: {} of {} from {} over {}",
        path.display(),
        counted(calls, "call", "calls"),
        counted(reports.len(), "system", "systems"),
        when(recording, 0),
        span(last),
    );
    if !recording.bad_lines.is_empty() {
        let _ = write!(
            out,
            "; {} skipped",
            counted(recording.bad_lines.len(), "line", "lines")
        );
    }
    if recording.out_of_order > 0 {
        let _ = write!(
            out,
            "; {} out of start order (sorted)",
            counted(recording.out_of_order, "line", "lines")
        );
    }
    let _ = writeln!(
        out,
        "\nreplayed {} in {} in {:.1} s ({per_call:.0} ns a call; read in {:.1} s)",
        counted(replayed, "call", "calls"),
        counted(runs, "run", "runs"),
        timing.replay.as_secs_f64(),
        timing.read.as_secs_f64(),
    );
    out
}

/// The tables: per system, one column per setting.
pub(crate) fn to_tables(
    path: &Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
    timing: Timing,
) -> String {
    let mut out = header(path, recording, reports, timing);
    for report in reports {
        let recorded_openings = report
            .recording
            .transitions
            .iter()
            .filter(|t| t.to == "open")
            .count();
        let _ = writeln!(
            out,
            "\n{}: {}, {} in the recording{}",
            report.name,
            counted(report.recording.calls.len(), "call", "calls"),
            counted(report.incidents.len(), "incident", "incidents"),
            if report.recording.transitions.is_empty() {
                String::new()
            } else if report.recording.observed {
                format!(
                    " (its breaker, observing, would have opened {})",
                    times(recorded_openings)
                )
            } else {
                format!(" (its breaker opened {})", times(recorded_openings))
            }
        );
        if report.recording.observed && report.unknown == 0 {
            let _ = writeln!(
                out,
                "  recorded in observe mode: its breaker refused no call, so every call has its real outcome and nothing is guessed"
            );
        } else if report.recording.observed {
            let _ = writeln!(
                out,
                "  recorded partly in observe mode: the calls its breaker refused while enforcing have no recorded outcome"
            );
        }
        if report.filled > 0 {
            let _ = writeln!(
                out,
                "  {} no recorded outcome here {} answered by the calls another replica ran at about the same time (--replica)",
                counted(report.filled, "call with", "calls with"),
                if report.filled == 1 { "is" } else { "are" }
            );
        }
        if report.unknown > 0 {
            let _ = writeln!(
                out,
                "  {} no recorded outcome (the recording's guard refused {}): the figure is the estimate, each answered from the calls on both sides of its gap; a figure they change shows how many of its calls were guessed and a range, which, where `ranges` says `every way`, holds the figure of every way they could have been answered (each succeeding or failing); past the replays made, the `possible` range holds it",
                counted(report.unknown, "call has", "calls have"),
                if report.unknown == 1 { "it" } else { "them" }
            );
        }
        let mut rows: Vec<(String, Vec<String>)> = vec![
            (
                String::new(),
                report.variants.iter().map(|v| v.label.clone()).collect(),
            ),
            row(report, "openings", |f, b| {
                // The breaker opened on the answers of the guessed calls it let run.
                bounded(
                    f.openings.len(),
                    b.openings,
                    b.possible.as_ref().map(|p| p.openings),
                    Some(f.guessed.ran),
                )
            }),
            row(report, "failing calls let through", |f, b| {
                bounded(
                    f.failing_let_through,
                    b.failing_let_through,
                    b.possible.as_ref().map(|p| p.failing_let_through),
                    Some(f.guessed.failing_let_through),
                )
            }),
            row(report, "healthy calls refused", |f, b| {
                bounded(
                    f.healthy_refused,
                    b.healthy_refused,
                    b.possible.as_ref().map(|p| p.healthy_refused),
                    Some(f.guessed.healthy_refused),
                )
            }),
            row(report, "failing calls refused", |f, b| {
                bounded(
                    f.failing_refused,
                    b.failing_refused,
                    b.possible.as_ref().map(|p| p.failing_refused),
                    Some(f.guessed.failing_refused),
                )
            }),
            row(report, "cancelled calls refused", |f, _| {
                thousands(f.other_refused)
            }),
            row(report, "bulkhead refusals", |f, b| {
                bounded(
                    f.bulkhead_refused,
                    b.bulkhead_refused,
                    b.possible.as_ref().map(|p| p.bulkhead_refused),
                    Some(f.guessed.bulkhead_refused),
                )
            }),
        ];
        if report.unknown > 0 {
            rows.push(row(report, "guessed calls let run", |f, _| {
                thousands(f.guessed.ran)
            }));
            rows.push(row(report, "ranges", |_, b| proof(b.proof)));
        }
        for (i, incident) in report.incidents.iter().enumerate() {
            rows.push((
                format!(
                    "incident {} at {} ({}, {} failing)",
                    i + 1,
                    when(recording, incident.start),
                    span(incident.end - incident.start),
                    thousands(incident.failing_calls as usize)
                ),
                report.variants.iter().map(|_| String::new()).collect(),
            ));
            rows.push(row(report, "  to fast fail", |f, b| {
                fast_fail(
                    f.incidents[i].to_fast_fail,
                    b.incidents[i].0,
                    b.possible.as_ref().map(|p| p.incidents[i].0),
                    f.incidents[i].guessed_before_fast_fail,
                )
            }));
            rows.push(row(report, "  failing calls let through", |f, b| {
                bounded(
                    f.incidents[i].failing_let_through,
                    b.incidents[i].1,
                    b.possible.as_ref().map(|p| p.incidents[i].1),
                    Some(f.incidents[i].guessed),
                )
            }));
        }
        // A setting the recording cannot tell gets no figures, only why.
        for (c, variant) in report.variants.iter().enumerate() {
            if variant.cannot_tell.is_empty() {
                continue;
            }
            for (label, values) in rows.iter_mut().skip(1) {
                if !values[c].is_empty() || !label.starts_with("incident") {
                    values[c] = "cannot tell".into();
                }
            }
        }
        let width = rows
            .iter()
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0);
        let columns: Vec<usize> = (0..report.variants.len())
            .map(|c| {
                rows.iter()
                    .map(|(_, v)| v[c].chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(8)
            })
            .collect();
        for (label, values) in &rows {
            let _ = write!(out, "  {label:<width$}");
            for (value, w) in values.iter().zip(&columns) {
                let _ = write!(out, "  {value:>w$}");
            }
            out.push('\n');
        }
        for variant in &report.variants {
            for why in &variant.cannot_tell {
                let _ = writeln!(out, "  {} cannot tell: {why}", variant.label);
            }
        }
        for variant in report.variants.iter().filter(|v| v.cannot_tell.is_empty()) {
            if variant.figures.openings.is_empty() {
                continue;
            }
            let _ = writeln!(out, "  openings ({}):", variant.label);
            for (at, why) in variant.figures.openings.iter().take(10) {
                let _ = writeln!(out, "    {}  {why}", when(recording, *at));
            }
            if variant.figures.openings.len() > 10 {
                let _ = writeln!(out, "    … {} in all", variant.figures.openings.len());
            }
        }
    }
    out
}

fn row(
    report: &SystemReport<'_>,
    label: &str,
    value: impl Fn(&Figures, &Bounds) -> String,
) -> (String, Vec<String>) {
    (
        label.to_owned(),
        report
            .variants
            .iter()
            .map(|v| value(&v.figures, &v.bounds))
            .collect(),
    )
}

fn ms(micros: u64) -> Value {
    json!(micros as f64 / 1000.0)
}

/// The figures as JSON.
pub(crate) fn to_json(
    path: &Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
    missing: &[String],
    timing: Timing,
) -> String {
    let systems: serde_json::Map<String, Value> = reports
        .iter()
        .map(|report| {
            let settings: Vec<Value> = report
                .variants
                .iter()
                .map(|v| {
                    let f = &v.figures;
                    let b = &v.bounds;
                    let range = |r: Range| json!([r.low, r.high]);
                    json!({
                        "settings": v.label,
                        "cannot_tell": v.cannot_tell,
                        "calls": f.calls,
                        "ran": f.ran,
                        "failing_let_through": f.failing_let_through,
                        "healthy_refused": f.healthy_refused,
                        "failing_refused": f.failing_refused,
                        "other_refused": f.other_refused,
                        "bulkhead_refused": f.bulkhead_refused,
                        "guessed": {
                            "ran": f.guessed.ran,
                            "failing_let_through": f.guessed.failing_let_through,
                            "healthy_refused": f.guessed.healthy_refused,
                            "failing_refused": f.guessed.failing_refused,
                            "bulkhead_refused": f.guessed.bulkhead_refused,
                        },
                        "ranges": {
                            "every_way": b.proof.exhaustive,
                            "ways_replayed": b.proof.paths,
                            "openings": range(b.openings),
                            "failing_let_through": range(b.failing_let_through),
                            "healthy_refused": range(b.healthy_refused),
                            "failing_refused": range(b.failing_refused),
                            "bulkhead_refused": range(b.bulkhead_refused),
                            "possible": b.possible.as_ref().map(|p| json!({
                                "openings": range(p.openings),
                                "failing_let_through": range(p.failing_let_through),
                                "healthy_refused": range(p.healthy_refused),
                                "failing_refused": range(p.failing_refused),
                                "bulkhead_refused": range(p.bulkhead_refused),
                            })),
                        },
                        "openings": f.openings.iter().map(|(at, why)| json!({
                            "at_ms": ms(*at), "time": when(recording, *at), "why": why,
                        })).collect::<Vec<_>>(),
                        "transitions": v.replay.transitions.iter().map(|t| json!({
                            "at_ms": ms(t.at), "from": t.from.as_str(), "to": t.to.as_str(), "why": t.why,
                        })).collect::<Vec<_>>(),
                        "incidents": f.incidents.iter().zip(&b.incidents).enumerate().map(|(i, (m, (fast, through)))| {
                            let possible = b.possible.as_ref().map(|p| p.incidents[i]);
                            json!({
                                "start_ms": ms(m.incident.start),
                                "to_fast_fail_ms": m.to_fast_fail.map(ms),
                                "to_fast_fail_ms_range": [fast.soonest.map(ms), fast.latest.map(ms)],
                                "to_fast_fail_ms_possible": possible.map(|(fast, _)| json!([fast.soonest.map(ms), fast.latest.map(ms)])),
                                "to_fast_fail_guessed": m.guessed_before_fast_fail,
                                "failing_let_through": m.failing_let_through,
                                "failing_let_through_guessed": m.guessed,
                                "failing_let_through_range": range(*through),
                                "failing_let_through_possible": possible.map(|(_, through)| range(through)),
                            })
                        }).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let value = json!({
                "calls": report.recording.calls.len(),
                "unknown_calls": report.unknown,
                "filled_by_replicas": report.filled,
                "observe_mode": report.recording.observed,
                "incidents": report.incidents.iter().map(|i| json!({
                    "start_ms": ms(i.start), "end_ms": ms(i.end), "time": when(recording, i.start),
                    "failing_calls": i.failing_calls,
                })).collect::<Vec<_>>(),
                "recorded_transitions": report.recording.transitions.iter().map(|t| json!({
                    "at_ms": ms(t.at), "from": t.from, "to": t.to, "why": t.why,
                })).collect::<Vec<_>>(),
                "replays": settings,
            });
            (report.name.clone(), value)
        })
        .collect();
    let replayed = replayed(reports);
    let value = json!({
        "recording": path.display().to_string(),
        "start": when(recording, 0),
        "calls": total_calls(reports),
        "bad_lines": recording.bad_lines.iter().map(|(n, why)| json!({"line": n, "why": why})).collect::<Vec<_>>(),
        "out_of_order": recording.out_of_order,
        "not_in_settings": missing,
        "replay_seconds": timing.replay.as_secs_f64(),
        "replay_ns_per_call": timing.replay.as_secs_f64() * 1e9 / replayed.max(1) as f64,
        "systems": systems,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}
