//! The `queue` scenario's figures: one table of every run's phases (the settings as
//! written, then each `--compare`), their JSON, and one picture of them all.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde_json::json;

use super::queue::{End, PhaseFigures, QueueRun, Upstream};
use super::render::seconds;

/// The runs of one system: each labelled, with its phases' figures.
pub(crate) struct Compared<'a> {
    pub(crate) system: &'a str,
    pub(crate) upstream: Upstream,
    /// (label, the run, its phases).
    pub(crate) runs: Vec<(String, QueueRun, Vec<PhaseFigures>)>,
}

/// The upstream in words: `8 workers of 100 ms, 2 for 40.0 s, 32 callers`.
fn described(u: &Upstream) -> String {
    format!(
        "{} workers of {} behind a queue, {} for {} after {}, {} callers",
        u.workers,
        seconds(u.service),
        u.degraded,
        seconds(u.degraded_for),
        seconds(u.phase),
        u.callers
    )
}

fn ms_pair((a, b): (f64, f64)) -> String {
    if a.is_nan() {
        "–".to_owned()
    } else {
        format!("{a:.0} / {b:.0} ms")
    }
}

/// The table: a row per run and phase.
pub(crate) fn table(compared: &Compared<'_>) -> String {
    let mut out = format!(
        "{}: queue, {}\n\n",
        compared.system,
        described(&compared.upstream)
    );
    out.push_str(
        "| settings | phase | capacity | goodput | p50 / p99 admitted | p50 / p99 from the caller's start | bulkhead full | breaker refused | timeouts | openings | limit | settled |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (label, _, phases) in &compared.runs {
        for p in phases {
            let limit = if p.limit.0 == p.limit.1 {
                p.limit.0.to_string()
            } else {
                format!("{}–{}", p.limit.0, p.limit.1)
            };
            let _ = writeln!(
                out,
                "| {label} | {} | {:.0}/s | {:.1}/s ({:.0}%) | {} | {} | {} | {} | {} | {} | {limit} | {} |",
                p.name,
                p.capacity,
                p.goodput,
                100.0 * p.goodput / p.capacity.max(1e-9),
                ms_pair(p.admitted),
                ms_pair(p.whole),
                p.bulkhead_full,
                p.open,
                p.timeouts,
                p.openings,
                p.settled.map_or("never".to_owned(), |s| format!("{s} s")),
            );
        }
    }
    out.push_str(
        "\ngoodput: successful calls a second; admitted: from the bulkhead's permit to the answer; \
         settled: seconds into the phase until one served 90% of the capacity\n",
    );
    out
}

fn number(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!((x * 10.0).round() / 10.0)
    } else {
        serde_json::Value::Null
    }
}

/// The figures as JSON.
pub(crate) fn to_json(compared: &Compared<'_>) -> serde_json::Value {
    let u = &compared.upstream;
    let runs: Vec<serde_json::Value> = compared
        .runs
        .iter()
        .map(|(label, _, phases)| {
            let phases: Vec<serde_json::Value> = phases
                .iter()
                .map(|p| {
                    json!({
                        "phase": p.name,
                        "capacity_per_s": number(p.capacity),
                        "goodput_per_s": number(p.goodput),
                        "admitted_p50_ms": number(p.admitted.0),
                        "admitted_p99_ms": number(p.admitted.1),
                        "whole_p50_ms": number(p.whole.0),
                        "whole_p99_ms": number(p.whole.1),
                        "bulkhead_full": p.bulkhead_full,
                        "breaker_refused": p.open,
                        "timeouts": p.timeouts,
                        "openings": p.openings,
                        "limit_low": p.limit.0,
                        "limit_high": p.limit.1,
                        "settled_s": p.settled,
                    })
                })
                .collect();
            json!({ "settings": label, "phases": phases })
        })
        .collect();
    json!({
        "system": compared.system,
        "scenario": "queue",
        "workers": u.workers,
        "degraded": u.degraded,
        "service_ms": u.service.as_millis() as u64,
        "callers": u.callers,
        "phase_ms": u.phase.as_millis() as u64,
        "degraded_for_ms": u.degraded_for.as_millis() as u64,
        "runs": runs,
    })
}

const COLOURS: [RGBColor; 4] = [
    RGBColor(210, 40, 40),
    RGBColor(30, 100, 200),
    RGBColor(40, 150, 60),
    RGBColor(150, 60, 170),
];
const CAPACITY: RGBColor = RGBColor(150, 150, 150);

type Error = Box<dyn std::error::Error>;

/// Successes a second of `run`, second by second up to `end`.
fn goodput(run: &QueueRun, end: f64) -> Vec<(f64, f64)> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let mut counts = vec![0.0; end.ceil().max(1.0) as usize];
    for (t, e) in &run.ends {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        if let (End::Ok { .. }, Some(n)) = (e, counts.get_mut(*t as usize)) {
            *n += 1.0;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    counts
        .into_iter()
        .enumerate()
        .map(|(s, n)| (s as f64 + 0.5, n))
        .collect()
}

/// One picture of every run: successes a second against the upstream's capacity (top),
/// the bulkhead's limit and the breaker's openings (bottom).
pub(crate) fn picture(path: &Path, compared: &Compared<'_>) -> Result<(), Error> {
    let phases = compared.upstream.phases();
    let end = phases[2].2;
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "{}: queue, {}",
        compared.system,
        described(&compared.upstream)
    );
    let root = root.titled(&title, ("sans-serif", 18))?;
    let (top, bottom) = root.split_vertically(330);
    let most = compared.upstream.capacity(compared.upstream.workers) * 1.5;
    let mut chart = ChartBuilder::on(&top)
        .margin(10)
        .margin_right(25)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..end, 0.0..most)?;
    chart.configure_mesh().y_desc("successes / s").draw()?;
    let steps = phases.iter().flat_map(|(_, from, to, workers)| {
        let c = compared.upstream.capacity(*workers);
        [(*from, c), (*to, c)]
    });
    chart
        .draw_series(LineSeries::new(steps, CAPACITY.stroke_width(3)))?
        .label("the upstream's capacity")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], CAPACITY.stroke_width(3)));
    for (i, (label, run, _)) in compared.runs.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(goodput(run, end), colour.stroke_width(2)))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    limits_panel(&bottom, compared, end)?;
    root.present()?;
    Ok(())
}

/// The bulkhead's limit of each run over time, a mark at each opening of its breaker.
fn limits_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    compared: &Compared<'_>,
    end: f64,
) -> Result<(), Error>
where
    DB::ErrorType: 'static,
{
    #[allow(clippy::cast_precision_loss)]
    let top = compared
        .runs
        .iter()
        .flat_map(|(_, run, _)| run.limits.iter().map(|l| l.1))
        .max()
        .unwrap_or(1) as f64
        * 1.6;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(25)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..end, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("bulkhead limit")
        .draw()?;
    for (i, (label, run, _)) in compared.runs.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        #[allow(clippy::cast_precision_loss)]
        let limits = run.limits.iter().map(|(t, l)| (*t, *l as f64));
        chart
            .draw_series(LineSeries::new(limits, colour.stroke_width(2)))?
            .label(format!("{label}: limit (× breaker opened)"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
        let openings = run
            .transitions
            .iter()
            .filter(|(_, s)| *s == outbound_guard::State::Open)
            .map(|(t, _)| Cross::new((*t, top * 0.05), 5, colour.stroke_width(2)));
        chart.draw_series(openings)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}
