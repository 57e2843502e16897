//! The breaker's open and half-open periods as shaded bands behind a timeline's series:
//! drawn the same way by `simulate`'s and `replay`'s pictures.

use outbound_guard::State;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// An open period's shade.
const OPEN: RGBColor = RGBColor(250, 205, 205);
/// A half-open period's shade.
const HALF_OPEN: RGBColor = RGBColor(252, 236, 190);

/// A chart of seconds against counts.
pub(crate) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Shades each `(from, to, state)` band up to `top`; the first open and the first
/// half-open band get a legend entry, `open` and `half_open`.
pub(crate) fn draw<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    bands: &[(f64, f64, State)],
    top: f64,
    (open, half_open): (&str, &str),
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let (mut first_open, mut first_half) = (true, true);
    for (from, to, state) in bands {
        let color = if *state == State::HalfOpen {
            HALF_OPEN
        } else {
            OPEN
        };
        let series = chart.draw_series(std::iter::once(Rectangle::new(
            [(*from, 0.0), (*to, top)],
            color.filled(),
        )))?;
        let name = match state {
            State::HalfOpen if first_half => {
                first_half = false;
                Some(half_open)
            }
            State::HalfOpen => None,
            _ if first_open => {
                first_open = false;
                Some(open)
            }
            _ => None,
        };
        if let Some(name) = name {
            series.label(name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], color.filled())
            });
        }
    }
    Ok(())
}
