//! Helpers shared by the runtime's integration tests (each test binary uses some of them).
#![allow(dead_code)]

use std::time::Duration;

use outbound_guard::{Breaker, Guard, Settings, State, SystemSettings};

/// One second.
pub const S: Duration = Duration::from_secs(1);
/// One millisecond.
pub const MS: Duration = Duration::from_millis(1);

/// The `sber` system of a settings file with `extra` lines in its table.
pub fn system(extra: &str) -> SystemSettings {
    Settings::parse(&format!("[systems.sber]\n{extra}\n"), "inline")
        .unwrap()
        .system("sber")
        .unwrap()
        .clone()
}

/// A guard for [`system`]`(extra)`.
pub fn guard(extra: &str) -> Guard {
    Guard::new(&system(extra))
}

/// The breaker's state and its window's failures and calls.
pub fn counts(breaker: &Breaker) -> (State, u32, u32) {
    let s = breaker.snapshot();
    (s.state, s.failures, s.calls)
}
