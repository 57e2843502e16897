//! The replay as JSON: per system, each setting's figures, how many of the calls behind
//! each were guessed, the ranges proven to hold every way of answering them, and, for
//! each alternative, its verdicts against the settings the service ran with.

use std::ops::RangeInclusive;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::preamble::{replayed, total_calls, Timing};
use outbound_guard_replay::FigureKind as Figure;
use outbound_guard_replay::Recording;
use outbound_guard_replay::{Compared, Known, Subject};
use outbound_guard_replay::{SystemReport, Variant};

/// Milliseconds, from microseconds.
fn ms(micros: u64) -> Value {
    json!(micros as f64 / 1000.0)
}

/// A figure's value in its JSON unit: a count, or milliseconds.
fn value(figure: Figure, count: usize) -> Value {
    if figure.is_time() {
        ms(count as u64)
    } else {
        json!(count)
    }
}

/// A proven range as `[low, high]` in the figure's unit.
fn range(figure: Figure, r: RangeInclusive<usize>) -> Value {
    json!([value(figure, *r.start()), value(figure, *r.end())])
}

/// A proven time to fast fail as `[soonest, latest]` (`null`: never).
fn fast_range(r: RangeInclusive<u64>) -> Value {
    let at = |t: u64| (t != u64::MAX).then(|| ms(t));
    json!([at(*r.start()), at(*r.end())])
}

/// The ranges proven to hold every way of answering: every figure's, `null` each where
/// none is proven.
fn ranges(variant: &Variant) -> Value {
    let mut out = Map::new();
    out.insert("every_way".into(), json!(variant.every_way()));
    out.insert("ways_replayed".into(), json!(variant.ways_replayed()));
    for figure in Figure::ALL {
        let r = variant
            .proven(figure)
            .map_or(Value::Null, |p| range(figure, p));
        out.insert(figure.key().into(), r);
    }
    Value::Object(out)
}

/// `v` of `figure` in its unit (a count, or ms).
fn unit_of(figure: Figure, v: u64) -> Value {
    value(figure, usize::try_from(v).unwrap_or(usize::MAX))
}

/// What the recording tells of one subject: `exact`, `estimated` with its interval, or
/// `cannot tell` with the reason.
fn known(figure: Option<Figure>, k: &Known) -> Value {
    let unit = |v: u64| match figure {
        Some(f) => value(f, usize::try_from(v).unwrap_or(usize::MAX)),
        None if v == u64::MAX => Value::Null,
        None => ms(v),
    };
    match k {
        Known::Told(t) if t.exact() => json!({"certainty": "exact"}),
        Known::Told(t) => json!({
            "certainty": "estimated",
            "low": unit(t.low),
            "high": unit(t.high),
            "guessed": t.guessed,
        }),
        Known::CannotTell(why) => json!({"certainty": "cannot tell", "why": why}),
    }
}

/// An alternative's verdicts against `base` on every figure and incident.
fn verdicts(report: &SystemReport<'_>, base: &Variant, alternative: &Variant) -> Value {
    let one = |subject: Subject, figure: Option<Figure>| {
        let (b, a, compared) = report.judged(base, alternative, subject);
        // The difference over the draws, in the subject's unit (a count, or ms).
        let unit = |d: i128| match figure {
            Some(f) if !f.is_time() => json!(d),
            _ => json!(d as f64 / 1000.0),
        };
        let difference = compared.spread.map_or(Value::Null, |(low, high, draws)| {
            json!({"low": unit(low), "high": unit(high), "draws": draws, "confidence": Compared::CONFIDENCE})
        });
        let mut this = known(figure, &a);
        // Where estimated: the least and greatest over the draws, inside its interval.
        if let (Known::Told(t), Some(f), Value::Object(o)) = (&a, figure, &mut this) {
            let drawn = alternative.drawn(f);
            if let Some(d) = drawn.filter(|_| !t.exact()) {
                o.insert(
                    "drawn".into(),
                    json!([unit_of(f, *d.start()), unit_of(f, *d.end())]),
                );
            }
        }
        json!({
            "verdict": compared.verdict.word(),
            "base": known(figure, &b),
            "this": this,
            "difference": difference,
        })
    };
    let mut out = Map::new();
    for figure in Figure::ALL {
        out.insert(
            figure.key().into(),
            one(Subject::Figure(figure), Some(figure)),
        );
    }
    let incidents: Vec<Value> = (0..alternative.incidents().len())
        .map(|i| one(Subject::FastFail(i), None))
        .collect();
    out.insert("to_fast_fail".into(), json!(incidents));
    Value::Object(out)
}

/// One setting's replay of a system.
fn setting(recording: &Recording, report: &SystemReport<'_>, v: &Variant) -> Value {
    let mut out = Map::new();
    out.insert("settings".into(), json!(v.label));
    out.insert("cannot_tell".into(), json!(v.cannot_tell));
    let holed = !report.holes.is_empty();
    out.insert(
        "counts_cannot_tell".into(),
        json!(holed.then_some(Known::IN_HOLES)),
    );
    out.insert("calls".into(), json!(v.calls()));
    out.insert("ran".into(), json!(v.ran()));
    let mut guessed = Map::new();
    guessed.insert("ran".into(), json!(v.guessed(Figure::Openings)));
    // A figure the recording cannot tell is `null`, and why is in `cannot_tell_why`.
    let mut why = Map::new();
    for figure in Figure::ALL {
        if figure != Figure::Openings {
            let figure_value = match report.known(v, Subject::Figure(figure)) {
                Known::CannotTell(reason) => {
                    why.insert(figure.key().into(), json!(reason));
                    Value::Null
                }
                Known::Told(t) => unit_of(figure, t.value),
            };
            out.insert(figure.key().into(), figure_value);
            guessed.insert(figure.key().into(), json!(v.guessed(figure)));
        }
    }
    out.insert("cannot_tell_why".into(), Value::Object(why));
    out.insert("guessed".into(), Value::Object(guessed));
    out.insert("ranges".into(), ranges(v));
    if let Some(base) = report.variants.first().filter(|b| !std::ptr::eq(*b, v)) {
        out.insert("verdicts".into(), verdicts(report, base, v));
    }
    let openings = v.openings().iter().map(|o| {
        json!({
            "at_ms": ms(o.at), "time": recording.when(o.at), "why": o.why, "guessed": o.guessed,
            "rests_on_holes": !v.ran_with && report.rests_on_holes(o.at),
        })
    });
    // A setting the recording cannot tell has no openings to list: `null`, not none.
    let openings: Value = if v.cannot_tell.is_empty() {
        openings.collect()
    } else {
        Value::Null
    };
    out.insert("openings".into(), openings);
    let transitions = v.replay.transitions.iter().map(
        |t| json!({"at_ms": ms(t.at), "from": t.from.as_str(), "to": t.to.as_str(), "why": t.why}),
    );
    out.insert("transitions".into(), transitions.collect());
    out.insert("incidents".into(), incidents(report, v));
    Value::Object(out)
}

/// One setting's figures in each incident of its system.
fn incidents(report: &SystemReport<'_>, v: &Variant) -> Value {
    let holed = !report.holes.is_empty();
    // Where the recording has holes, only the failing calls the settings it ran with
    // let through are all in it; a setting it cannot tell, none.
    let through_untold = v
        .cannot_tell
        .first()
        .cloned()
        .or_else(|| (holed && !v.ran_with).then(|| Known::IN_HOLES.to_owned()));
    let incidents = v.incidents().iter().enumerate().map(|(i, m)| {
        // The value told (the draws' median, where drawn); never is `null`.
        let (fast_untold, fast) = match report.known(v, Subject::FastFail(i)) {
            Known::CannotTell(why) => (Some(why), None),
            Known::Told(t) => (None, (t.value != u64::MAX).then(|| ms(t.value))),
        };
        json!({
            "start_ms": ms(m.incident.start),
            "to_fast_fail_ms": fast,
            "to_fast_fail_cannot_tell": fast_untold,
            "to_fast_fail_ms_range": v.proven_fast_fail(i).map(fast_range),
            "to_fast_fail_guessed": m.guessed_before_fast_fail,
            "unseen": m.unseen,
            "failing_let_through": through_untold.is_none().then(|| v.incident_through(i)),
            "failing_let_through_cannot_tell": through_untold,
            "failing_let_through_guessed": m.guessed,
            "failing_let_through_range": v.proven_through(i).map(|r| range(Figure::FailingLetThrough, r)),
        })
    });
    incidents.collect()
}

/// One system's replays.
fn system(recording: &Recording, report: &SystemReport<'_>) -> Value {
    let settings: Vec<Value> = report
        .variants
        .iter()
        .map(|v| setting(recording, report, v))
        .collect();
    json!({
        "calls": report.recording.calls.len(),
        "unknown_calls": report.unknown,
        "filled_by_replicas": report.filled,
        "observe_mode": report.recording.observed,
        "incidents": report.incidents.iter().map(|i| json!({
            "start_ms": ms(i.start), "end_ms": ms(i.end), "time": recording.when(i.start),
            "failing_calls": i.failing_calls,
        })).collect::<Vec<_>>(),
        "holes": report.holes.iter().map(|h| json!({
            "start_ms": ms(h.start), "end_ms": ms(h.end), "time": recording.when(h.start),
            "calls_per_second_before": h.rate_before, "calls_per_second_during": h.rate_during,
        })).collect::<Vec<_>>(),
        "recorded_transitions": report.recording.transitions.iter().map(|t| json!({
            "at_ms": ms(t.at), "from": t.from.as_str(), "to": t.to.as_str(), "why": t.why,
        })).collect::<Vec<_>>(),
        "replays": settings,
    })
}

/// The replay as JSON.
pub(crate) fn to_json(
    path: &Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
    missing: &[String],
    timing: Timing,
) -> String {
    let systems: Map<String, Value> = reports
        .iter()
        .map(|report| (report.name.clone(), system(recording, report)))
        .collect();
    let replayed = replayed(reports);
    let value = json!({
        "recording": path.display().to_string(),
        "start": recording.when(0),
        "calls": total_calls(reports),
        "bad_lines": recording.bad_lines.iter().map(|(n, why)| json!({"line": n, "why": why})).collect::<Vec<_>>(),
        "out_of_order": recording.out_of_order,
        "not_in_settings": missing,
        "replay_seconds": timing.replay.as_secs_f64(),
        "read_seconds": timing.read.as_secs_f64(),
        "replay_ns_per_call": timing.replay.as_secs_f64() * 1e9 / replayed.max(1) as f64,
        "systems": systems,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}
