//! Numbers as the format writes them (milliseconds, exact to the microsecond) and as its
//! errors show them.

/// Milliseconds, exact to the microsecond, from microseconds.
pub(crate) fn millis(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

/// Microseconds from milliseconds the caller has checked (finite, not negative): the
/// nearest, at most `u64::MAX`.
pub(crate) fn micros(millis: f64) -> u64 {
    // `as` saturates: a negative or NaN value is 0, a huge one `u64::MAX`.
    (millis * 1000.0).round() as u64
}

/// A number as a person wrote it: `1e30` rather than thirty-one digits.
pub(crate) fn shown(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e16 {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}
