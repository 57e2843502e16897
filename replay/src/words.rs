//! Counts and spans in the words the reports print: `1 call`, `1,234 calls`, `850 ms`.

use std::time::Duration;

/// `1 call`, `2 calls`, `1,234 calls`.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: impl ToString) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A span as the screen says it: `850 ms`, `12.3 s`, `4m 10s`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_counts_read_as_the_screen_says_them() {
        assert_eq!(span(413_000), "413 ms");
        assert_eq!(span(2_500_000), "2.5 s");
        assert_eq!(span(250_000_000), "4m 10s");
        assert_eq!(thousands(1_234_567_u64), "1,234,567");
        assert_eq!(counted(1, "call", "calls"), "1 call");
    }
}
