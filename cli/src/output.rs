//! Writing what a command prints: to a pipe whose reader may have gone (`| head`), or
//! a terminal. A closed output ends the command quietly; a message that cannot be
//! written to stderr is dropped, never a panic.

use std::io::{ErrorKind, Write as _};
use std::time::Duration;

use crate::failure::Failure;

/// Writes `text` to stdout. Its reader gone (a closed pipe) is not a failure: nobody
/// is left to read the rest.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Io(format!("cannot write the output: {e}"))),
    }
}

/// Writes one line to stderr, if it can.
pub(crate) fn warn(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
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

/// `1 call`, `2 calls`, `1,234 calls`.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: usize) -> String {
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

/// `once`, `twice`, `3 times`.
pub(crate) fn times(n: usize) -> String {
    match n {
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        n => format!("{} times", thousands(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_words() {
        assert_eq!(counted(1, "call", "calls"), "1 call");
        assert_eq!(counted(0, "call", "calls"), "0 calls");
        assert_eq!(counted(1_234_567, "call", "calls"), "1,234,567 calls");
        assert_eq!(times(1), "once");
        assert_eq!(times(2), "twice");
        assert_eq!(times(1000), "1,000 times");
    }
}
