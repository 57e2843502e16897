//! Helpers of the integration tests, as the core's tests have them.

use std::time::Duration;

use outbound_guard::{Breaker, Guard, Settings, State};

/// One second.
pub const S: Duration = Duration::from_secs(1);
/// One millisecond.
pub const MS: Duration = Duration::from_millis(1);

/// A guard for the `sber` system of a settings file with `extra` lines in its table.
pub fn guard(extra: &str) -> Guard {
    let settings = Settings::parse(&format!("[systems.sber]\n{extra}\n"), "inline").unwrap();
    Guard::new(settings.system("sber").unwrap())
}

/// The breaker's state and its window's failures and calls.
pub fn counts(breaker: &Breaker) -> (State, u32, u32) {
    let s = breaker.snapshot();
    (s.state, s.failures, s.calls)
}
