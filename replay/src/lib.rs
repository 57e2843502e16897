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
//! [`Variant::paired`] says one setting against another, [`Search::run`] walks the
//! settings under [`Objectives`], and [`Prepared::fails_fast_within`] and
//! [`Prepared::refuses_at_most`] answer a team's test whether a setting meets its
//! objective on its own recording: met, missed or cannot tell ([`Meets`], in the
//! screen's words). [`Replay::scripted`] replays a scripted upstream's answers instead
//! of a recording's, and [`Replay::looped`] runs callers in a closed loop against an
//! upstream whose answers depend on its own state and the calls in flight (a queue in
//! front of a few workers).
//!
//! ```
//! use std::time::Duration;
//!
//! use outbound_guard_replay::{FigureKind, Known, Meets, Prepared, Recording, Subject};
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
//! // A team's objectives: it failed fast within 5 s and refused no healthy call.
//! assert_eq!(prepared.fails_fast_within(&variant, Duration::from_secs(5)), Meets::Met);
//! assert_eq!(prepared.refuses_at_most(&variant, 0), Meets::Met);
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

pub use engine::{Fate, Replay};
pub use figures::{Figure as FigureKind, Incident, IncidentMet};
pub use holes::Hole;
pub use objectives::{Meets, Objectives};
pub use prepared::Prepared;
pub use recording::{Call, Recorded, Recording, SystemRecording};
pub use report::{SystemReport, Variant};
pub use search::{Candidate, Search};
pub use transitions::BreakerTransition;
pub use verdict::{Compared, Difference, Known, Subject, Told};
