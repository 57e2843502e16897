//! Helpers shared by the settings crate's integration tests (each test binary uses some
//! of them).
#![allow(dead_code)]

use outbound_guard_settings::SettingsError;

/// Asserts that `error` came from the environment variable `variable`, and that its
/// message names it first.
#[track_caller]
pub fn assert_names_variable(error: &SettingsError, variable: &str) {
    assert_eq!(error.variable_name(), Some(variable), "{error}");
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("environment variable `{variable}`: ")),
        "{shown:?} should name {variable}"
    );
}
