//! The format of an `outbound-guard` recording, defined once: the recorder
//! (`outbound-guard-recorder`) writes it and `outbound-guard replay` reads it, both
//! through [`Line`]'s serde implementations.
//!
//! One JSON object a line, of four kinds, [`Line`]'s variants: a [`Call`], a
//! [`Transition`], the [`Limits`] and [`Observing`] (observe mode turned on or off):
//!
//! ```text
//! {"system":"sber","start":1764858808123.456,"duration_ms":12.345,"outcome":"success"}
//! {"system":"sber","start":1764858808200.0,"duration_ms":0.0,"outcome":"rejected","cause":"open"}
//! {"system":"sber","start":1764858808190.01,"transition":"open","from":"closed","reason":"failure_rate","why":"sber opened: 16 of 50 calls failed (32% ≥ 30%)"}
//! {"system":"sber","start":1764858808000.0,"read_timeout_ms":1500.0,"total_timeout_ms":2000.0}
//! {"system":"sber","start":1764858808000.0,"observing":true}
//! ```
//!
//! A line has no tag: its kind shows in its fields (`outcome`, `transition`, both
//! limits, `observing`), and [`Line::parse`] decides it by them.
//!
//! Times are milliseconds as JSON numbers with up to three decimals: microseconds,
//! exactly (a start of today in microseconds is below 2^53, and the shortest decimal
//! that reads back as the same `f64` has at most three decimals, so writing then reading
//! gives the same microsecond). A `start` may also be an RFC 3339 time
//! (`"2026-12-04T14:33:28.123Z"`), as a converted access log gives it.
//!
//! ```
//! use outbound_guard_recording::{Line, Outcome};
//! let line = Line::call("sber", 1_764_858_808_123_456, 12_345, Outcome::Success, None, None);
//! let text = line.to_json();
//! assert_eq!(
//!     text,
//!     r#"{"system":"sber","start":1764858808123.456,"duration_ms":12.345,"outcome":"success"}"#
//! );
//! let read = Line::parse(&text).unwrap();
//! assert_eq!(read.start_micros(), Ok(1_764_858_808_123_456));
//! assert!(matches!(&read, Line::Call(call) if call.duration_micros() == 12_345));
//! assert_eq!(read, line);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod line;
mod names;
mod number;
mod read;
mod start;

pub use self::line::{Call, Limits, Line, Observing, Transition};
pub use self::names::{Cause, Cut, Outcome};
pub use self::start::Start;
