//! A replay as an SVG picture, drawn with `plotters`' SVG backend as `simulate`'s are:
//!
//! - the breakers' states, one strip each: the recording's own breaker (as it logged its
//!   transitions: enforcing, or observing) and the replayed breaker of each setting;
//! - the recorded calls per time bin: succeeded, failed (slow, timed out, cut), and
//!   refused by the recording's guard, so that the load does not seem to stop while
//!   its breaker was open;
//! - each setting's failing calls let through, those whose answer the recording does
//!   not have drawn apart as guessed (dotted), and its calls refused (dashed);
//! - behind both panels, the recording's holes (`outbound_guard_replay::Hole`) shaded: where its calls
//!   are missing, so no count drawn there is the setting's.
//!
//! Every legend is in a column beside the plots, never over them, and the picture grows
//! to hold it: every setting has its own colour and its own legend lines at any count.

use std::path::Path;

use outbound_guard::State;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::bands::Chart;
use outbound_guard_replay::Fate;
use outbound_guard_replay::Hole;
use outbound_guard_replay::{Recorded, Recording};
use outbound_guard_replay::{SystemReport, Variant};

const HEALTHY: RGBColor = RGBColor(60, 160, 60);
const FAILING: RGBColor = RGBColor(210, 40, 40);
const REFUSED: RGBColor = RGBColor(130, 130, 130);
/// A state's colour in the strips; closed is left white.
const OPEN: RGBColor = RGBColor(235, 120, 120);
/// Open on guessed answers: an opening fed by answers the replay guessed.
const GUESSED_OPEN: RGBColor = RGBColor(248, 205, 205);
const HALF_OPEN: RGBColor = RGBColor(245, 200, 90);
const FORCED_OPEN: RGBColor = RGBColor(150, 30, 30);
const DISABLED: RGBColor = RGBColor(170, 170, 170);
/// Behind the calls' panels: a stretch of the recording whose calls are missing.
const HOLE: RGBColor = RGBColor(225, 225, 235);
/// The first settings' colours, in the order of the columns; past them, [`setting_color`]
/// spreads the others around the colour wheel.
const SETTINGS: [RGBColor; 4] = [
    RGBColor(30, 100, 200),
    RGBColor(120, 60, 170),
    RGBColor(230, 130, 0),
    RGBColor(0, 150, 150),
];

/// The `i`-th setting's colour: each its own, however many there are (the hues of the
/// ones past [`SETTINGS`] a golden angle apart, so that no two are alike).
fn setting_color(i: usize) -> RGBColor {
    if let Some(color) = SETTINGS.get(i) {
        return *color;
    }
    let hue = ((i - SETTINGS.len()) as f64 * 0.618_033_988_75 + 0.05).fract();
    let (r, g, b) = HSLColor(hue, 0.75, 0.4).rgb();
    RGBColor(r, g, b)
}

/// The picture's width and least height, and the width of the legends' column on its
/// right.
const WIDTH: u32 = 1200;
const HEIGHT: u32 = 820;
/// A legend line's height, and the room above a legend's first line.
const LEGEND_LINE: u32 = 18;
const LEGEND_TOP: u32 = 30;
const LEGEND: u32 = 300;
/// The width of every panel's label area on the left, so that their time axes align.
const LABELS: u32 = 200;

type Error = Box<dyn std::error::Error>;

/// A bin width in seconds that gives at most about 600 bins over `span` seconds.
fn bin_width(span: f64) -> f64 {
    [1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0]
        .into_iter()
        .find(|w| span / w <= 600.0)
        .unwrap_or(3600.0)
}

/// A state's colour in the strips (`None`: closed, left white).
fn shade(state: State) -> Option<RGBColor> {
    match state {
        State::Open => Some(OPEN),
        State::HalfOpen => Some(HALF_OPEN),
        State::ForcedOpen => Some(FORCED_OPEN),
        State::Disabled => Some(DISABLED),
        State::Closed => None,
    }
}

/// The spans `(from, to, state)` in seconds, from transitions `(µs, state entered)` in
/// order, the last one lasting to `end`.
fn spans(transitions: impl Iterator<Item = (u64, State)>, end: f64) -> Vec<(f64, f64, State)> {
    let mut spans = Vec::new();
    let mut current: Option<(f64, State)> = None;
    for (at, to) in transitions {
        let at = at as f64 / 1e6;
        if let Some((from, state)) = current.take() {
            spans.push((from, at, state));
        }
        current = Some((at, to));
    }
    if let Some((from, state)) = current {
        spans.push((from, end.max(from), state));
    }
    spans
}

/// A setting's name in the picture: its label, and whether the recording cannot tell
/// it, or its replay rests on guessed answers (of calls the recording's guard refused,
/// which this setting let run).
fn named(variant: &Variant) -> String {
    let guessed = variant.replay.asked.iter().filter(|a| a.is_some()).count();
    if !variant.cannot_tell.is_empty() {
        format!("{} (cannot tell)", variant.label)
    } else if guessed > 0 {
        format!("{} ({guessed} answers guessed)", variant.label)
    } else {
        variant.label.clone()
    }
}

/// One setting's replayed calls per bin: failing let through on recorded answers, on
/// guessed ones, and refused.
struct Lines {
    /// The setting's label (its strip's name says what rests on guesses).
    name: String,
    through: Vec<f64>,
    guessed: Vec<f64>,
    refused: Vec<f64>,
}

/// `variant`'s [`Lines`] over `bins` bins, `bin` placing a call's start.
fn lines_of(
    variant: &Variant,
    calls: &[outbound_guard_replay::Call],
    bins: usize,
    bin: impl Fn(u64) -> usize,
) -> Lines {
    let mut lines = Lines {
        name: variant.label.clone(),
        through: vec![0.0; bins],
        guessed: vec![0.0; bins],
        refused: vec![0.0; bins],
    };
    // The calls without a recorded outcome are asked their answers in order.
    let mut unknown = 0;
    for (call, fate) in calls.iter().zip(&variant.replay.fates) {
        let asked = if call.outcome == Recorded::Rejected {
            unknown += 1;
            variant.replay.asked.get(unknown - 1).copied().flatten()
        } else {
            None
        };
        match fate {
            Fate::Ran | Fate::Pending if call.outcome.failing() => {
                lines.through[bin(call.start)] += 1.0;
            }
            Fate::Ran | Fate::Pending if asked == Some(true) => {
                lines.guessed[bin(call.start)] += 1.0;
            }
            Fate::Refused => lines.refused[bin(call.start)] += 1.0,
            _ => {}
        }
    }
    lines
}

/// A breaker's strip: its name, its states' spans, and when it opened on guessed
/// answers (seconds).
type Strip = (String, Vec<(f64, f64, State)>, Vec<f64>);

/// One line of a legend: a swatch (a line, a dashed or dotted line, or a block) and its
/// words.
enum Swatch {
    Line(RGBColor),
    Dashed(RGBColor),
    Dotted(RGBColor),
    Block(RGBColor),
}

/// The recorded calls per time bin: succeeded, failing, refused by the recording's guard.
struct Binned {
    healthy: Vec<f64>,
    failing: Vec<f64>,
    refused: Vec<f64>,
}

/// The time bins of a picture over `end` seconds: their width and count.
#[derive(Clone, Copy)]
struct Bins {
    width: f64,
    count: usize,
}

impl Bins {
    fn over(end: f64) -> Bins {
        let width = bin_width(end);
        Bins {
            width,
            count: (end / width).floor() as usize + 1,
        }
    }

    /// The bin of a call started at `start` (µs).
    fn of(self, start: u64) -> usize {
        (((start as f64 / 1e6) / self.width) as usize).min(self.count - 1)
    }

    /// The seconds at bin `i`'s start.
    fn x(self, i: usize) -> f64 {
        i as f64 * self.width
    }

    /// The bins' width in words: `5 s`, `1 min`.
    fn unit(self) -> String {
        if self.width >= 60.0 {
            format!("{} min", self.width / 60.0)
        } else {
            format!("{} s", self.width)
        }
    }
}

/// The recorded calls, binned.
fn recorded(calls: &[outbound_guard_replay::Call], bins: Bins) -> Binned {
    let mut r = Binned {
        healthy: vec![0.0; bins.count],
        failing: vec![0.0; bins.count],
        refused: vec![0.0; bins.count],
    };
    for call in calls {
        let line = if call.outcome.failing() {
            &mut r.failing
        } else if call.outcome == Recorded::Success {
            &mut r.healthy
        } else if call.outcome == Recorded::Rejected {
            &mut r.refused
        } else {
            continue;
        };
        line[bins.of(call.start)] += 1.0;
    }
    r
}

/// The strips: the recording's own breaker, then each setting's replayed one.
fn strips(report: &SystemReport<'_>, end: f64) -> Vec<Strip> {
    let live_name = if report.recording.observed {
        "recorded (would be)"
    } else {
        "recorded (live)"
    };
    let live = report.recording.transitions.iter().map(|t| (t.at, t.to));
    let mut strips: Vec<Strip> = vec![(live_name.to_owned(), spans(live, end), Vec::new())];
    for v in &report.variants {
        let guessed = v.openings().iter().filter(|o| o.guessed);
        strips.push((
            format!("replayed: {}", named(v)),
            spans(v.replay.transitions.iter().map(|t| (t.at, t.to)), end),
            guessed.map(|o| o.at as f64 / 1e6).collect(),
        ));
    }
    strips
}

/// The three legends: the states, the recorded calls, the replayed calls.
type Legends = [Vec<(Swatch, String)>; 3];

fn legends(strips: &[Strip], recorded: &Binned, per_variant: &[Lines], holes: &[Hole]) -> Legends {
    let mut states = vec![(Swatch::Block(OPEN), "open".to_owned())];
    if strips.iter().any(|(_, _, guessed)| !guessed.is_empty()) {
        let words = "open, on guessed answers".to_owned();
        states.push((Swatch::Block(GUESSED_OPEN), words));
    }
    states.extend([
        (Swatch::Block(HALF_OPEN), "half-open".to_owned()),
        (Swatch::Block(FORCED_OPEN), "forced open".to_owned()),
        (Swatch::Block(DISABLED), "disabled".to_owned()),
        (Swatch::Block(WHITE), "closed".to_owned()),
    ]);
    let mut calls = vec![
        (Swatch::Line(HEALTHY), "succeeded".to_owned()),
        (
            Swatch::Line(FAILING),
            "failed, slow, timed out or cut".to_owned(),
        ),
    ];
    if recorded.refused.iter().any(|n| *n > 0.0) {
        let words = "refused by the recording's guard".to_owned();
        calls.push((Swatch::Dashed(REFUSED), words));
    }
    if !holes.is_empty() {
        let words = "a hole: its calls missing".to_owned();
        calls.push((Swatch::Block(HOLE), words));
    }
    let mut replayed = Vec::new();
    for (i, lines) in per_variant.iter().enumerate() {
        let (color, label) = (setting_color(i), &lines.name);
        replayed.push((Swatch::Line(color), format!("{label}: failing let through")));
        if lines.guessed.iter().any(|n| *n > 0.0) {
            let words = format!("{label}: failing let through, guessed");
            replayed.push((Swatch::Dotted(color), words));
        }
        replayed.push((Swatch::Dashed(color), format!("{label}: refused")));
    }
    [states, calls, replayed]
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The states, one strip per breaker, named in the label area on the left of `canvas`.
fn draw_strips(
    area: &Area<'_>,
    canvas: &Area<'_>,
    strips: &[Strip],
    end: f64,
) -> Result<(), Error> {
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(25)
        .x_label_area_size(20)
        .y_label_area_size(LABELS)
        .build_cartesian_2d(0.0..end, 0.0..strips.len() as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (row, (name, spans, guessed)) in strips.iter().enumerate() {
        // The first strip on top.
        let y = (strips.len() - 1 - row) as f64;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y + 0.12), (end, y + 0.88)],
            BLACK.mix(0.25).stroke_width(1),
        )))?;
        chart.draw_series(spans.iter().filter_map(|(from, to, state)| {
            let on_guesses = *state == State::Open && guessed.contains(from);
            let color = if on_guesses {
                Some(GUESSED_OPEN)
            } else {
                shade(*state)
            };
            color.map(|c| Rectangle::new([(*from, y + 0.12), (*to, y + 0.88)], c.filled()))
        }))?;
        let (_, py) = chart.backend_coord(&(0.0, y + 0.5));
        canvas.draw(&Text::new(
            name.clone(),
            (12, py - 7),
            ("sans-serif", 12).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}

/// The recorded calls' panel.
fn draw_recorded(
    area: &Area<'_>,
    r: &Binned,
    bins: Bins,
    end: f64,
    holes: &[Hole],
) -> Result<(), Error> {
    let most = r
        .healthy
        .iter()
        .chain(&r.failing)
        .chain(&r.refused)
        .copied()
        .fold(1.0, f64::max)
        * 1.1;
    let mut chart = panel(
        area,
        end,
        most,
        &format!("recorded calls / {}", bins.unit()),
    )?;
    draw_holes(&mut chart, holes, most)?;
    let points = |line: &[f64]| -> Vec<(f64, f64)> {
        line.iter()
            .enumerate()
            .map(|(i, n)| (bins.x(i), *n))
            .collect()
    };
    chart.draw_series(LineSeries::new(points(&r.healthy), HEALTHY.stroke_width(2)))?;
    chart.draw_series(LineSeries::new(points(&r.failing), FAILING.stroke_width(2)))?;
    if r.refused.iter().any(|n| *n > 0.0) {
        chart.draw_series(DashedLineSeries::new(
            points(&r.refused),
            6,
            4,
            REFUSED.stroke_width(2),
        ))?;
    }
    Ok(())
}

/// Each setting's replay: failing let through (guessed ones dotted), refused (dashed).
fn draw_replayed(
    area: &Area<'_>,
    per_variant: &[Lines],
    bins: Bins,
    end: f64,
    holes: &[Hole],
) -> Result<(), Error> {
    let most = per_variant
        .iter()
        .flat_map(|l| l.through.iter().chain(&l.guessed).chain(&l.refused))
        .copied()
        .fold(1.0, f64::max)
        * 1.1;
    let mut chart = panel(
        area,
        end,
        most,
        &format!("replayed calls / {}", bins.unit()),
    )?;
    draw_holes(&mut chart, holes, most)?;
    let points = |line: &[f64]| -> Vec<(f64, f64)> {
        line.iter()
            .enumerate()
            .map(|(i, n)| (bins.x(i), *n))
            .collect()
    };
    for (i, lines) in per_variant.iter().enumerate() {
        let color = setting_color(i).stroke_width(2);
        chart.draw_series(LineSeries::new(points(&lines.through), color))?;
        if lines.guessed.iter().any(|n| *n > 0.0) {
            chart.draw_series(DashedLineSeries::new(points(&lines.guessed), 2, 3, color))?;
        }
        chart.draw_series(DashedLineSeries::new(points(&lines.refused), 6, 4, color))?;
    }
    Ok(())
}

/// The recording's holes, shaded from the bottom of `chart` to `most`.
fn draw_holes(
    chart: &mut Chart<'_, SVGBackend<'_>>,
    holes: &[Hole],
    most: f64,
) -> Result<(), Error> {
    chart.draw_series(holes.iter().map(|h| {
        let (from, to) = (h.start as f64 / 1e6, h.end as f64 / 1e6);
        Rectangle::new([(from, 0.0), (to, most)], HOLE.filled())
    }))?;
    Ok(())
}

/// Writes `report`'s timeline to `path`.
pub(crate) fn timeline(
    path: &Path,
    recording: &Recording,
    report: &SystemReport<'_>,
) -> Result<(), Error> {
    let calls = &report.recording.calls;
    let end = calls.last().map_or(1.0, |c| c.start as f64 / 1e6).max(1.0);
    let bins = Bins::over(end);
    let recorded = recorded(calls, bins);
    let per_variant: Vec<Lines> = report
        .variants
        .iter()
        .map(|v| lines_of(v, calls, bins.count, |start| bins.of(start)))
        .collect();
    let strips = strips(report, end);
    let [state_legend, recorded_legend, replayed_legend] =
        legends(&strips, &recorded, &per_variant, &report.holes);
    let strip_height = 40 + 26 * strips.len() as u32;
    // Each panel at least as tall as its legend, so that no legend line is cut off.
    let tallest = recorded_legend.len().max(replayed_legend.len()) as u32;
    let half = ((HEIGHT - strip_height.min(HEIGHT / 2) - 30) / 2)
        .max(LEGEND_TOP + LEGEND_LINE * tallest + 10);
    let height = strip_height + 30 + 2 * half;
    let canvas = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    canvas.fill(&WHITE)?;
    let title = format!(
        "{}: replay of {} calls from {}",
        report.name,
        calls.len(),
        recording.when(0)
    );
    let root = canvas.titled(&title, ("sans-serif", 18))?;
    let (plots, legends) = root.split_horizontally(WIDTH - LEGEND);
    let (states, rest) = plots.split_vertically(strip_height);
    let (top, bottom) = rest.split_vertically(half);
    draw_strips(&states, &canvas, &strips, end)?;
    draw_recorded(&top, &recorded, bins, end, &report.holes)?;
    draw_replayed(&bottom, &per_variant, bins, end, &report.holes)?;
    let top_y = i32::try_from(strip_height).unwrap_or(0);
    let half = i32::try_from(half).unwrap_or(0);
    draw_legend(&legends, 10, "breaker states", &state_legend)?;
    draw_legend(&legends, top_y + 10, "recorded calls", &recorded_legend)?;
    draw_legend(
        &legends,
        top_y + half + 10,
        "replayed calls",
        &replayed_legend,
    )?;
    canvas.present()?;
    Ok(())
}

/// A legend with its `heading`, from `y` down, in the legends' column.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    y: i32,
    heading: &str,
    lines: &[(Swatch, String)],
) -> Result<(), Error>
where
    DB::ErrorType: 'static,
{
    let font = ("sans-serif", 13).into_font();
    area.draw(&Text::new(
        heading.to_owned(),
        (10, y),
        font.clone().style(FontStyle::Bold).color(&BLACK),
    ))?;
    for (i, (swatch, words)) in lines.iter().enumerate() {
        let line_y = y + 20 + i32::try_from(LEGEND_LINE as usize * i).unwrap_or(0);
        let mid = line_y + 6;
        match swatch {
            Swatch::Line(color) => {
                area.draw(&PathElement::new(
                    [(12, mid), (36, mid)],
                    color.stroke_width(2),
                ))?;
            }
            Swatch::Dashed(color) => {
                for dash in [12, 22, 32] {
                    area.draw(&PathElement::new(
                        [(dash, mid), (dash + 6, mid)],
                        color.stroke_width(2),
                    ))?;
                }
            }
            Swatch::Dotted(color) => {
                for dot in (12..36).step_by(5) {
                    area.draw(&PathElement::new(
                        [(dot, mid), (dot + 2, mid)],
                        color.stroke_width(2),
                    ))?;
                }
            }
            Swatch::Block(color) => {
                area.draw(&Rectangle::new(
                    [(12, mid - 5), (36, mid + 5)],
                    color.filled(),
                ))?;
                area.draw(&Rectangle::new(
                    [(12, mid - 5), (36, mid + 5)],
                    BLACK.mix(0.25).stroke_width(1),
                ))?;
            }
        }
        area.draw(&Text::new(
            words.clone(),
            (44, line_y),
            font.clone().color(&BLACK),
        ))?;
    }
    Ok(())
}

/// One panel of the timeline: seconds since the recording's start against `y_desc`, up
/// to `most`.
fn panel<'a, DB: DrawingBackend + 'a>(
    area: &DrawingArea<DB, Shift>,
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
        .y_label_area_size(LABELS)
        .build_cartesian_2d(0.0..end, 0.0..most)?;
    chart
        .configure_mesh()
        .x_desc("seconds since the recording's start")
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    Ok(chart)
}
