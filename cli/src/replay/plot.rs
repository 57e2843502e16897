//! A replay as an SVG picture: the recorded outcomes per time bin under the replayed
//! breaker's state (top), and each setting's failing calls let through and healthy
//! calls refused (bottom). Drawn with `plotters`' SVG backend, as `simulate`'s are.

use std::path::Path;

use outbound_guard::State;
use plotters::prelude::*;

use super::engine::Fate;
use super::recording::{Recorded, Recording};
use super::render::{when, SystemReport};
use crate::bands::{self, Chart};

const HEALTHY: RGBColor = RGBColor(60, 160, 60);
const FAILING: RGBColor = RGBColor(210, 40, 40);
/// One colour per setting, in the order of the columns.
const SETTINGS: [RGBColor; 4] = [
    RGBColor(30, 100, 200),
    RGBColor(120, 60, 170),
    RGBColor(230, 130, 0),
    RGBColor(0, 150, 150),
];

type Error = Box<dyn std::error::Error>;

/// A bin width in seconds that gives at most about 600 bins over `span` seconds.
fn bin_width(span: f64) -> f64 {
    [1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0]
        .into_iter()
        .find(|w| span / w <= 600.0)
        .unwrap_or(3600.0)
}

/// Writes `report`'s timeline to `path`.
pub(crate) fn timeline(
    path: &Path,
    recording: &Recording,
    report: &SystemReport<'_>,
) -> Result<(), Error> {
    let calls = &report.recording.calls;
    let end = calls.last().map_or(1.0, |c| c.start as f64 / 1e6).max(1.0);
    let width = bin_width(end);
    let bins = (end / width).floor() as usize + 1;
    let bin = |start: u64| ((start as f64 / 1e6) / width) as usize;
    let mut healthy = vec![0.0; bins];
    let mut failing = vec![0.0; bins];
    for call in calls {
        if call.outcome.failing() {
            failing[bin(call.start)] += 1.0;
        } else if call.outcome == Recorded::Success {
            healthy[bin(call.start)] += 1.0;
        }
    }
    let per_variant: Vec<(String, Vec<f64>, Vec<f64>)> = report
        .variants
        .iter()
        .map(|v| {
            let mut through = vec![0.0; bins];
            let mut refused = vec![0.0; bins];
            for (call, fate) in calls.iter().zip(&v.replay.fates) {
                match fate {
                    Fate::Ran | Fate::Pending if call.outcome.failing() => {
                        through[bin(call.start)] += 1.0
                    }
                    Fate::Refused if call.outcome == Recorded::Success => {
                        refused[bin(call.start)] += 1.0
                    }
                    _ => {}
                }
            }
            (v.label.clone(), through, refused)
        })
        .collect();
    let bands = bands(report, end);
    let x = |i: usize| i as f64 * width;
    let unit = if width >= 60.0 {
        format!("{} min", width / 60.0)
    } else {
        format!("{width} s")
    };

    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "{}: replay of {} calls from {}",
        report.name,
        calls.len(),
        when(recording, 0)
    );
    let root = root.titled(&title, ("sans-serif", 18))?;
    let (top, bottom) = root.split_vertically(320);

    let most = healthy.iter().chain(&failing).copied().fold(1.0, f64::max) * 1.1;
    let mut chart = panel(&top, end, most, &format!("recorded calls / {unit}"))?;
    draw_bands(&mut chart, &bands, most, &report.variants[0].label)?;
    chart
        .draw_series(LineSeries::new(
            healthy.iter().enumerate().map(|(i, n)| (x(i), *n)),
            HEALTHY.stroke_width(2),
        ))?
        .label("recorded: succeeded")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], HEALTHY.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            failing.iter().enumerate().map(|(i, n)| (x(i), *n)),
            FAILING.stroke_width(2),
        ))?
        .label("recorded: failed, slow or timed out")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], FAILING.stroke_width(2)));
    legend(&mut chart)?;

    let most = per_variant
        .iter()
        .flat_map(|(_, a, b)| a.iter().chain(b))
        .copied()
        .fold(1.0, f64::max)
        * 1.1;
    let mut chart = panel(&bottom, end, most, &format!("replayed calls / {unit}"))?;
    draw_bands(&mut chart, &bands, most, &report.variants[0].label)?;
    for (i, (label, through, refused)) in per_variant.iter().enumerate() {
        let color = SETTINGS[i % SETTINGS.len()];
        chart
            .draw_series(LineSeries::new(
                through.iter().enumerate().map(|(i, n)| (x(i), *n)),
                color.stroke_width(2),
            ))?
            .label(format!("{label}: failing calls let through"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(DashedLineSeries::new(
                refused.iter().enumerate().map(|(i, n)| (x(i), *n)),
                6,
                4,
                color.stroke_width(2),
            ))?
            .label(format!("{label}: healthy calls refused"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 8, y)], color.stroke_width(2)));
    }
    legend(&mut chart)?;
    root.present()?;
    Ok(())
}

/// One panel of the timeline: seconds since the recording's start against `y_desc`, up
/// to `most`.
fn panel<'a, DB: DrawingBackend + 'a>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    end: f64,
    most: f64,
    y_desc: &str,
) -> Result<Chart<'a, DB>, Error>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(25)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..end, 0.0..most)?;
    chart
        .configure_mesh()
        .x_desc("seconds since the recording's start")
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    Ok(chart)
}

/// A panel's legend, in its upper right corner.
fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>) -> Result<(), Error>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

/// The spans the first setting's breaker was open or half-open, in seconds.
fn bands(report: &SystemReport<'_>, end: f64) -> Vec<(f64, f64, State)> {
    let mut bands = Vec::new();
    let mut current: Option<(f64, State)> = None;
    for t in &report.variants[0].replay.transitions {
        let at = t.at as f64 / 1e6;
        if let Some((from, s)) = current.take() {
            bands.push((from, at, s));
        }
        if t.to != State::Closed && t.to != State::Disabled {
            current = Some((at, t.to));
        }
    }
    if let Some((from, s)) = current {
        bands.push((from, end, s));
    }
    bands
}

/// The replayed breaker's periods under the first variant's settings (`label`).
fn draw_bands<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    bands: &[(f64, f64, State)],
    top: f64,
    label: &str,
) -> Result<(), Error>
where
    DB::ErrorType: 'static,
{
    let open = format!("replayed breaker open ({label})");
    let half_open = format!("replayed breaker half-open ({label})");
    bands::draw(chart, bands, top, (&open, &half_open))
}
