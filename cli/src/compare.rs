//! `--compare KEY=VALUE[,KEY=VALUE…]`: keys changed in every system, as the
//! `CLIENT_<SYSTEM>__<KEY>` variables change them at startup; shared by `simulate` and
//! `replay`. Keys that must move together (`read_timeout=5,total_timeout=6`) change in
//! one alternative.

use outbound_guard_settings::__private::did_you_mean;
use outbound_guard_settings::{Key, Settings};

use crate::failure::Failure;

/// The overrides that change the keys of `change` in every system, as
/// `CLIENT_<SYSTEM>__<KEY>` variables do at startup (replacing an override `--env` took
/// for the same key), and the alternative's label: `read_timeout=5,total_timeout=6`.
pub(crate) fn vars(
    change: &str,
    settings: &Settings,
    base: &[(String, String)],
) -> Result<(String, Vec<(String, String)>), Failure> {
    let mut labels = Vec::new();
    let mut changed: Vec<(String, String)> = Vec::new();
    for pair in change.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Failure::Usage(format!(
                "--compare {change:?}: expected KEY=VALUE, such as cb_failure_rate=0.3 (several keys that change together: read_timeout=5,total_timeout=6)"
            )));
        };
        let (name, value) = (key.trim(), value.trim());
        let Some(key) = Key::from_name(name) else {
            let keys: Vec<&str> = outbound_guard_settings::KEYS
                .iter()
                .map(|k| k.name())
                .collect();
            return Err(Failure::Usage(format!(
                "--compare {change:?}: no key `{name}`; {}allowed keys: {}",
                did_you_mean(name, keys.iter().copied()),
                keys.join(", ")
            )));
        };
        if labels
            .iter()
            .any(|l: &String| l.starts_with(&format!("{}=", key.name())))
        {
            return Err(Failure::Usage(format!(
                "--compare {change:?}: `{}` twice; each key once in an alternative",
                key.name()
            )));
        }
        labels.push(format!("{}={value}", key.name()));
        changed.extend(settings.names().map(|name| {
            (
                outbound_guard_settings::env_var(name, key),
                value.to_owned(),
            )
        }));
    }
    if labels.is_empty() {
        return Err(Failure::Usage(format!(
            "--compare {change:?}: expected KEY=VALUE, such as cb_failure_rate=0.3"
        )));
    }
    let mut vars: Vec<(String, String)> = base
        .iter()
        .filter(|(name, _)| !changed.iter().any(|(c, _)| c == name))
        .cloned()
        .collect();
    vars.extend(changed);
    Ok((labels.join(","), vars))
}
