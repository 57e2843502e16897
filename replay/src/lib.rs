//! A recorded day's calls replayed through other settings.
//!
//! Each system's recorded calls run at their recorded start times, on tokio's paused
//! clock, through a fresh real `Guard` of each setting; a call the replayed breaker
//! refuses never runs. A [`Recording`] is read once ([`read_recording`]), each system
//! [`Prepared`] once (its operator's actions, the calls without a recorded outcome and
//! the draws of their answers, its incidents and its holes), then replayed through any
//! setting ([`Prepared::variant`]) into figures, each as far as the recording tells it
//! ([`Known`]); [`compare`] says one setting against another, and [`Search`] walks the
//! settings under [`Objectives`].

#[cfg(test)]
mod drawn;
mod engine;
mod figures;
mod guess;
mod holes;
mod knowable;
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

pub use engine::{replay_with, Choice, Extras, Fate, Replay, ReplayedTransition};
pub use figures::{FastFailRange, Figure as FigureKind, Range, Ranges};
pub use guess::Options;
pub use holes::Hole;
pub use objectives::{healthy_cap, score, totals, Cap, Meets, Objective, Objectives};
pub use prepared::{Certainty, Prepared};
pub use recording::{read as read_recording, Call, Recorded, Recording, SystemRecording};
pub use replicas::{fill as fill_from_replicas, Replica};
pub use report::{preamble, replayed, span, total_calls, when, SystemReport, Timing, Variant};
pub use search::{front, Common, Search, Tried};
pub use space::{groups, label, Base, Change, Seen};
pub use verdict::{
    compare, drawn, incident_through, judged, known, paired, Compared, Difference, Known, Subject,
    Told, CONFIDENCE, DRAWS, ESTIMATE_ERROR, IN_HOLES,
};
