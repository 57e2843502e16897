//! `--compare KEY=VALUE`: one key changed in every system, as the
//! `CLIENT_<SYSTEM>__<KEY>` variables change it at startup; shared by `simulate` and
//! `replay`.

use outbound_guard_settings::{Key, Settings};

use crate::failure::Failure;

/// The overrides that change one key in every system, as `CLIENT_<SYSTEM>__<KEY>`
/// variables do at startup (replacing an override `--env` took for the same key).
pub(crate) fn vars(
    change: &str,
    settings: &Settings,
    base: &[(String, String)],
) -> Result<(String, Vec<(String, String)>), Failure> {
    let Some((key, value)) = change.split_once('=') else {
        return Err(Failure::Usage(format!(
            "--compare {change:?}: expected KEY=VALUE, such as cb_failure_rate=0.3"
        )));
    };
    let (key, value) = (key.trim(), value.trim());
    let Some(key) = Key::from_name(key) else {
        let keys: Vec<&str> = outbound_guard_settings::KEYS
            .iter()
            .map(|k| k.name())
            .collect();
        return Err(Failure::Usage(format!(
            "--compare {change:?}: no key `{key}`; allowed keys: {}",
            keys.join(", ")
        )));
    };
    let changed: Vec<(String, String)> = settings
        .names()
        .map(|name| {
            (
                outbound_guard_settings::env_var(name, key),
                value.to_owned(),
            )
        })
        .collect();
    let mut vars: Vec<(String, String)> = base
        .iter()
        .filter(|(name, _)| !changed.iter().any(|(c, _)| c == name))
        .cloned()
        .collect();
    vars.extend(changed);
    Ok((format!("{}={value}", key.name()), vars))
}
