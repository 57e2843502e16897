//! The breaker's vocabulary: its [`State`]s and the [`Reason`] it moves, read by the
//! breaker, its observers, health and metrics alike. The lowest floor of the crate: it
//! imports only [`ManualAction`](crate::action::ManualAction), which sits beside it.

use std::fmt;
use std::time::Duration;

use crate::action::ManualAction;

/// The state of a breaker. Serialized (feature `serde`) as its [`as_str`](State::as_str).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum State {
    /// Calls flow; outcomes are counted in the window.
    Closed,
    /// Calls are rejected at once until the open duration has passed.
    Open,
    /// A fixed number of trial calls decide between closed and open.
    HalfOpen,
    /// An operator forced it open: every call is rejected until reset.
    ForcedOpen,
    /// An operator disabled it: every call flows and nothing is counted until reset.
    Disabled,
}

impl State {
    /// Every state, in declaration order: `ALL[state.index()] == state`.
    pub(crate) const ALL: [State; 5] = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::Disabled,
    ];

    /// The state's position in [`State::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The state's name in `snake_case`, as metrics and logs print it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::Disabled => "disabled",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a breaker changed state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reason {
    /// Closed → open: the window's failure rate reached the threshold.
    FailureRate {
        /// Failures in the window.
        failures: u32,
        /// Outcomes in the window.
        calls: u32,
        /// The configured `cb_failure_rate`.
        threshold: f64,
    },
    /// Open → half-open: the open duration has passed.
    OpenElapsed {
        /// How long it was open.
        after: Duration,
    },
    /// Half-open → closed: every trial call succeeded.
    TrialsSucceeded {
        /// The number of trials.
        trials: u32,
    },
    /// Half-open → open: a trial call failed.
    TrialFailed {
        /// Trials that had succeeded before this one failed.
        succeeded: u32,
        /// The number of trials.
        trials: u32,
    },
    /// An operator acted (through the API): forced a state or reset (observe mode's
    /// switch is no transition).
    Manual(ManualAction),
    /// The settings file's `cb_mode` acted: at startup, or when a reload changed it.
    Settings(ManualAction),
}

impl Reason {
    /// The reason's short name, for logs, metric labels and health: `failure_rate`,
    /// `open_elapsed`, `trials_succeeded`, `trial_failed`, `manual` or `settings`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Reason::FailureRate { .. } => "failure_rate",
            Reason::OpenElapsed { .. } => "open_elapsed",
            Reason::TrialsSucceeded { .. } => "trials_succeeded",
            Reason::TrialFailed { .. } => "trial_failed",
            Reason::Manual(_) => "manual",
            Reason::Settings(_) => "settings",
        }
    }

    /// The figures behind an opening: `(failures, outcomes)` of the window that reached
    /// the threshold, or of the trials when one failed (`1` of those counted). `None`
    /// for the other reasons.
    pub fn figures(&self) -> Option<(u32, u32)> {
        match *self {
            Reason::FailureRate {
                failures, calls, ..
            } => Some((failures, calls)),
            Reason::TrialFailed { succeeded, .. } => Some((1, succeeded.saturating_add(1))),
            _ => None,
        }
    }
}
