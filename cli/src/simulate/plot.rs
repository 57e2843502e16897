//! A run's timeline as an SVG picture: the breaker's state as bands, callers alive and
//! upstream calls in flight (top), refusals and upstream calls per second (bottom).
//! Drawn with `plotters`' SVG backend and its built-in text metrics: no system fonts.

use std::path::Path;

use outbound_guard::State;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::engine::Timeline;
use crate::bands::{self, Chart};

const FAULT_OVER: RGBColor = RGBColor(60, 160, 60);
const ALIVE: RGBColor = RGBColor(120, 60, 170);
const IN_FLIGHT: RGBColor = RGBColor(30, 100, 200);
const REFUSED: RGBColor = RGBColor(210, 40, 40);

type Error = Box<dyn std::error::Error>;

/// Writes `timeline` to `path` as an SVG picture titled `title`.
pub fn timeline(path: &Path, title: &str, timeline: &Timeline) -> Result<(), Error> {
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (top, bottom) = root.split_vertically(330);
    let bands = bands(timeline);
    let (start, end) = (timeline.start, timeline.end.max(timeline.start + 1.0));

    // Callers alive and upstream calls in flight, sampled at each arrival.
    let most = timeline
        .samples
        .iter()
        .map(|(_, alive, flight)| (*alive).max(*flight))
        .max()
        .unwrap_or(0)
        .max(1);
    #[allow(clippy::cast_precision_loss)]
    let top_max = most as f64 * 1.1;
    let mut chart = panel(&top, start, end, top_max, "callers")?;
    draw_bands(&mut chart, &bands, top_max, timeline.fault_end)?;
    #[allow(clippy::cast_precision_loss)]
    chart
        .draw_series(LineSeries::new(
            timeline.samples.iter().map(|(t, a, _)| (*t, *a as f64)),
            ALIVE.stroke_width(2),
        ))?
        .label("callers alive (in guard.call)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], ALIVE.stroke_width(2)));
    #[allow(clippy::cast_precision_loss)]
    chart
        .draw_series(LineSeries::new(
            timeline.samples.iter().map(|(t, _, f)| (*t, *f as f64)),
            IN_FLIGHT.stroke_width(2),
        ))?
        .label("upstream calls in flight")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], IN_FLIGHT.stroke_width(2)));
    legend(&mut chart)?;

    // Refusals and upstream calls per second.
    let refused = per_second(&timeline.refusals, start, end);
    let upstream = per_second(&timeline.upstream, start, end);
    let most = refused
        .iter()
        .chain(&upstream)
        .map(|(_, n)| *n)
        .fold(1.0, f64::max);
    let mut chart = panel(&bottom, start, end, most * 1.1, "per second")?;
    draw_bands(&mut chart, &bands, most * 1.1, timeline.fault_end)?;
    chart
        .draw_series(LineSeries::new(upstream, IN_FLIGHT.stroke_width(2)))?
        .label("upstream calls / s")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], IN_FLIGHT.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(refused, REFUSED.stroke_width(2)))?
        .label("refusals / s")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], REFUSED.stroke_width(2)));
    legend(&mut chart)?;
    root.present()?;
    Ok(())
}

fn panel<'a, DB: DrawingBackend + 'a>(
    area: &'a DrawingArea<DB, Shift>,
    start: f64,
    end: f64,
    top: f64,
    y: &str,
) -> Result<Chart<'a, DB>, Error>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(25)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(start..end, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("seconds since the fault started")
        .y_desc(y)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    Ok(chart)
}

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

/// The spans the breaker was open or half-open, from its transitions.
fn bands(timeline: &Timeline) -> Vec<(f64, f64, State)> {
    let mut bands = Vec::new();
    let mut current: Option<(f64, State)> = None;
    for (at, state) in &timeline.transitions {
        if let Some((from, s)) = current.take() {
            bands.push((from, *at, s));
        }
        if *state != State::Closed {
            current = Some((*at, *state));
        }
    }
    if let Some((from, s)) = current {
        bands.push((from, timeline.end, s));
    }
    bands
}

fn draw_bands<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    bands: &[(f64, f64, State)],
    top: f64,
    fault_end: Option<f64>,
) -> Result<(), Error>
where
    DB::ErrorType: 'static,
{
    bands::draw(chart, bands, top, ("breaker open", "breaker half-open"))?;
    // The fault's start (0) and, for recovery, its end.
    chart.draw_series(std::iter::once(PathElement::new(
        [(0.0, 0.0), (0.0, top)],
        BLACK.stroke_width(1),
    )))?;
    if let Some(end) = fault_end {
        chart
            .draw_series(std::iter::once(PathElement::new(
                [(end, 0.0), (end, top)],
                FAULT_OVER.stroke_width(2),
            )))?
            .label("fault ends")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], FAULT_OVER.stroke_width(2)));
    }
    Ok(())
}

/// Events per one-second bin, as (bin start, count) points.
fn per_second(events: &[f64], start: f64, end: f64) -> Vec<(f64, f64)> {
    let first = start.floor();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bins = ((end.ceil() - first).max(1.0)) as usize;
    let mut counts = vec![0.0; bins];
    for t in events {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let bin = (t - first).floor().max(0.0) as usize;
        if let Some(count) = counts.get_mut(bin) {
            *count += 1.0;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    counts
        .into_iter()
        .enumerate()
        .map(|(i, n)| (first + i as f64, n))
        .collect()
}
