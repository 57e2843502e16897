//! A breaker's transition, one type for the recording's breaker, a replayed one and a
//! setting's openings; and the one observer the replay's engine keeps a guard's
//! transitions with, for `replay`'s recorded calls and `simulate`'s scripted ones alike.

use std::sync::Mutex;
use std::time::Duration;

use outbound_guard::{Observer, State, Transition};
use tokio::time::Instant;

/// A transition of a breaker: the recording's own ([`SystemRecording::transitions`](crate::SystemRecording::transitions)),
/// a replayed one's ([`Replay::transitions`](crate::Replay::transitions)), or one of a
/// setting's openings ([`Variant::openings`](crate::Variant::openings)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BreakerTransition {
    /// Microseconds since the recording's start.
    pub at: u64,
    /// The state it left (of a recorded line that does not say, the state the one
    /// before it entered; closed for the first).
    pub from: State,
    /// The state it entered.
    pub to: State,
    /// Into open: for how long (a replayed breaker's; `None` for a recorded one).
    pub open: Option<Duration>,
    /// The log line: `sber opened: 16 of 50 calls failed (32% ≥ 30%)`.
    pub why: String,
    /// Of a setting's openings: whether guessed answers fed the breaker before it
    /// (calls without a recorded outcome it let run since it last closed). `false`
    /// elsewhere.
    pub guessed: bool,
}

/// One transition of a guard's breaker.
#[derive(Debug, Clone)]
pub(crate) struct Moved {
    pub at: Instant,
    pub from: State,
    pub to: State,
    /// Into open: for how long.
    pub open: Option<Duration>,
    /// Its log line: `sber opened: 16 of 50 calls failed (32% ≥ 30%)`.
    pub why: String,
}

/// A guard's transitions, in order.
#[derive(Default)]
pub(crate) struct Transitions(Mutex<Vec<Moved>>);

impl Transitions {
    /// Every transition so far.
    pub(crate) fn seen(&self) -> Vec<Moved> {
        self.0.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

impl Observer for Transitions {
    fn on_transition(&self, t: &Transition<'_>) {
        if let Ok(mut all) = self.0.lock() {
            all.push(Moved {
                at: t.at,
                from: t.from,
                to: t.to,
                open: t.open.map(|open| open.length),
                why: t.to_string(),
            });
        }
    }

    fn wants_calls(&self) -> bool {
        false
    }
}
