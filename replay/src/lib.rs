//! A recorded day's calls replayed through other settings: what each setting would
//! have done, how sure that is, one setting against another, and a search under
//! objectives. The `outbound-guard` command's `replay`, `tune` and `simulate` are built
//! on it.
//!
//! Each system's recorded calls run at their recorded start times, on tokio's paused
//! clock, through a fresh real `Guard` of each setting; a call the replayed breaker
//! refuses never runs. A [`Recording`] is read once ([`Recording::read`]), each of its
//! systems [`Prepared`] once (its operator's actions, the calls without a recorded
//! outcome and the draws of their answers, its incidents and its holes), then replayed
//! through any setting ([`Prepared::variant`]) into a [`Variant`] whose figures
//! (openings, failing calls let through, healthy calls refused, …) are each told as
//! far as the recording tells them ([`Known`]: exact, estimated within an interval, or
//! "cannot tell" and why);
//! [`Variant::paired`] says one setting against another, and [`Search::run`] walks
//! the settings under [`Objectives`]. [`Replay::scripted`] replays a scripted
//! upstream's answers instead of a recording's, and [`Replay::looped`] runs callers in a
//! closed loop against an upstream whose answers depend on its own state and the calls
//! in flight (a queue in front of a few workers).
//!
//! ```
//! use outbound_guard_replay::{FigureKind, Known, Prepared, Recording, Subject};
//! use outbound_guard_settings::Settings;
//!
//! // A minute of `sber`'s calls, one every 100 ms: healthy, then every one failing.
//! let mut lines = String::new();
//! for i in 0..600_u32 {
//!     let outcome = if i < 300 { "success" } else { "failure" };
//!     let start = 1_796_395_656_000.0 + f64::from(i) * 100.0;
//!     lines += &format!(
//!         "{{\"system\":\"sber\",\"start\":{start},\"duration_ms\":5.0,\"outcome\":\"{outcome}\"}}\n"
//!     );
//! }
//! let recording = Recording::read(lines.as_bytes(), true).unwrap();
//! let settings = Settings::parse("[systems.sber]\ncb_failure_rate = 0.5\n", "resilience.toml").unwrap();
//!
//! let mut prepared = Prepared::new("sber", &recording.systems["sber"], None);
//! let variant = prepared.ran_with("as set", settings.system("sber").unwrap());
//! let through = prepared.known(&variant, Subject::Figure(FigureKind::FailingLetThrough));
//! // Every call has its recorded outcome: the figure is exact, and the breaker
//! // opened long before the 300 failing calls were all let through.
//! let Known::Told(told) = through else { panic!("{through:?}") };
//! assert!(told.exact() && told.value < 300, "{told:?}");
//! ```

#![warn(unnameable_types, unreachable_pub)]

#[cfg(test)]
mod drawn;
mod engine;
mod figures;
mod guess;
mod holes;
mod knowable;
mod looped;
mod objectives;
mod prepared;
mod recording;
mod replicas;
mod report;
mod search;
mod space;
mod transitions;
mod verdict;
mod ways;
mod words;

pub use engine::{Fate, Replay, ReplayedTransition};
pub use figures::{Figure as FigureKind, Incident, Met, Opening};
pub use holes::Hole;
pub use objectives::{Meets, Objectives};
pub use prepared::Prepared;
pub use recording::{Call, Recorded, RecordedTransition, Recording, SystemRecording};
pub use report::{SystemReport, Variant};
pub use search::{Candidate, Search};
pub use verdict::{Compared, Difference, Known, Subject, Told};
