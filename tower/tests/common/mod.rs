//! Helpers of the integration tests, as the core's tests have them.

use outbound_guard::{Breaker, Settings, State, SystemSettings};

/// The `sber` system of a settings file with `extra` lines in its table.
pub fn system(extra: &str) -> SystemSettings {
    Settings::parse(&format!("[systems.sber]\n{extra}\n"), "inline")
        .unwrap()
        .system("sber")
        .unwrap()
        .clone()
}

/// The breaker's state and its window's failures and calls.
pub fn counts(breaker: &Breaker) -> (State, u32, u32) {
    let s = breaker.snapshot();
    (s.state, s.failures, s.calls)
}
