//! Loading the settings file as a service does at startup, with or without the process
//! environment's overrides.

use std::path::PathBuf;

use outbound_guard_settings::{Loader, Settings, SettingsError};

use crate::args::EnvFlag;

/// The loader a service uses at startup: the file alone, or with the process
/// environment's overrides.
fn loader(env: &EnvFlag) -> Loader {
    if env.env {
        Loader::new()
    } else {
        Loader::new().env(std::iter::empty::<(String, String)>())
    }
}

/// Reads and validates `file` as a service does at startup.
pub(crate) fn load(
    file: &PathBuf,
    env: &EnvFlag,
    systems: &[String],
) -> Result<Settings, SettingsError> {
    loader(env).require_systems(systems).read(file)
}

/// The overrides `--env` applies: the process environment's variables (the loader has
/// already rejected ours that are not Unicode).
pub(crate) fn vars(env: &EnvFlag) -> Vec<(String, String)> {
    if env.env {
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect()
    } else {
        Vec::new()
    }
}
