//! The `grpc-timeout` header: the caller's deadline read from a request, and the
//! budget left written back for the server (gRPC over HTTP/2: at most 8 digits and a
//! unit, `H` `M` `S` `m` `u` `n`).

use std::time::Duration;

/// The header's name.
pub(crate) const GRPC_TIMEOUT: http::HeaderName = http::HeaderName::from_static("grpc-timeout");

/// `budget` as the header's value.
pub(crate) fn header(budget: Duration) -> http::HeaderValue {
    http::HeaderValue::from_str(&format(budget)).expect("digits and a unit letter")
}

/// The duration a `grpc-timeout` value says, or `None` when it is not one (the header
/// is then ignored, as tonic's server ignores it).
pub(crate) fn parse(value: &[u8]) -> Option<Duration> {
    let (&unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let amount: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(match unit {
        b'H' => Duration::from_secs(amount * 3600),
        b'M' => Duration::from_secs(amount * 60),
        b'S' => Duration::from_secs(amount),
        b'm' => Duration::from_millis(amount),
        b'u' => Duration::from_micros(amount),
        b'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// `budget` as a `grpc-timeout` value, rounded up to the finest unit whose count fits
/// in 8 digits: the server's deadline is never earlier than the caller's.
fn format(budget: Duration) -> String {
    const MAX: u128 = 99_999_999;
    let nanos = budget.as_nanos();
    for (unit, per) in [
        ('n', 1),
        ('u', 1_000),
        ('m', 1_000_000),
        ('S', 1_000_000_000),
        ('M', 60_000_000_000),
        ('H', 3_600_000_000_000),
    ] {
        let count = nanos.div_ceil(per);
        if count <= MAX {
            return format!("{count}{unit}");
        }
    }
    format!("{MAX}H")
}

#[cfg(test)]
mod tests {
    use super::{format, parse};
    use std::time::Duration;

    #[test]
    fn reads_every_unit_and_rejects_what_is_not_a_timeout() {
        assert_eq!(parse(b"2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse(b"3M"), Some(Duration::from_secs(180)));
        assert_eq!(parse(b"5S"), Some(Duration::from_secs(5)));
        assert_eq!(parse(b"250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse(b"7u"), Some(Duration::from_micros(7)));
        assert_eq!(parse(b"99999999n"), Some(Duration::from_nanos(99_999_999)));
        for bad in [
            &b""[..],
            b"S",
            b"5",
            b"5s",
            b"-5S",
            b"123456789m",
            b"1.5S",
            b" 5S",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn writes_the_finest_unit_that_fits_rounding_up() {
        assert_eq!(format(Duration::from_nanos(1)), "1n");
        assert_eq!(format(Duration::from_millis(35)), "35000000n");
        assert_eq!(format(Duration::from_millis(100)), "100000u");
        assert_eq!(format(Duration::from_secs(35)), "35000000u");
        assert_eq!(format(Duration::from_secs(3600)), "3600000m");
        assert_eq!(format(Duration::new(35, 1)), "35000001u");
        assert_eq!(format(Duration::from_secs(100_000_000)), "1666667M");
        assert_eq!(format(Duration::MAX), "99999999H");
        for budget in [1, 999, 1_000_001, 123_456_789_012, 5_000_000_000_000] {
            let budget = Duration::from_nanos(budget);
            let back = parse(format(budget).as_bytes()).unwrap();
            assert!(
                back >= budget && back - budget < budget / 100_000 + Duration::from_micros(1),
                "{budget:?} -> {back:?}"
            );
        }
    }
}
