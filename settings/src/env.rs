//! Environment overrides: `CLIENT_SBER__CB_FAILURE_RATE=0.5` sets `cb_failure_rate` of
//! system `sber` at startup, without a rebuild.
//!
//! The ownership rule: a variable `<PREFIX><SYSTEM>__<KEY>` is ours when `<KEY>` is
//! one of our keys or a near miss of one (then its system must exist); every other
//! variable under the prefix belongs to the application and is left alone.

use crate::error::{ErrorKind, SettingsError};
use crate::keys::{env_var_with_prefix, key_or_near_miss, Key};
use crate::raw::{self, Entry, RawFile, Source};
use crate::suggest::{did_you_mean_as, quoted_list};

/// What an environment variable under the prefix is, by the ownership rule.
enum Claim<'a> {
    /// `<PREFIX><SYSTEM>__<KEY>` with a key of ours or a near miss of one.
    Override {
        system: &'a str,
        key_part: &'a str,
        key: Key,
    },
    /// `<PREFIX>SBER_CB_FAILURE_RATE`: a known system and a key of ours with a single
    /// underscore between them.
    SingleUnderscore { system: String, key: Key },
}

/// Whether the variable whose name follows the prefix with `rest` is ours.
fn claim<'a>(rest: &'a str, systems: &[&str]) -> Option<Claim<'a>> {
    if let Some((system, key_part)) = rest.split_once("__") {
        let key = key_or_near_miss(&key_part.to_ascii_lowercase())?;
        return Some(Claim::Override {
            system,
            key_part,
            key,
        });
    }
    let lower = rest.to_ascii_lowercase();
    systems.iter().find_map(|system| {
        let key_part = lower.strip_prefix(system)?.strip_prefix('_')?;
        let key = key_or_near_miss(key_part)?;
        Some(Claim::SingleUnderscore {
            system: (*system).to_owned(),
            key,
        })
    })
}

/// Whether a variable is ours by name alone (before the file's systems are known):
/// used to decide whether a variable that is not Unicode is an error.
fn ours_by_name(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(_, key)| key_or_near_miss(&key.to_ascii_lowercase()).is_some())
}

/// The process environment's variables under `prefix`. One of ours (by the ownership
/// rule) whose name or value is not Unicode is an error; the application's variables
/// are left alone, Unicode or not.
pub(crate) fn process_vars(prefix: &str) -> Result<Vec<(String, String)>, SettingsError> {
    let mut vars = Vec::new();
    for (name, value) in std::env::vars_os() {
        let lossy = name.to_string_lossy();
        if !lossy.starts_with(prefix) {
            continue;
        }
        match (name.to_str(), value.to_str()) {
            (Some(name), Some(value)) => vars.push((name.to_owned(), value.to_owned())),
            _ if !ours_by_name(&lossy, prefix) => {}
            _ => {
                return Err(SettingsError::new(
                    ErrorKind::Malformed,
                    "environment",
                    "name and value must be valid UTF-8",
                )
                .variable(Some(&lossy)))
            }
        }
    }
    Ok(vars)
}

/// Applies every variable of ours (`<PREFIX><SYSTEM>__<KEY>`) to the file's tables.
pub(crate) fn apply<I, K, V>(
    file: &mut RawFile,
    origin: &str,
    prefix: &str,
    vars: I,
) -> Result<(), SettingsError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    // Sorted so that the first error reported does not depend on the environment's order.
    let mut vars: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(name, _)| name.as_ref().starts_with(prefix))
        .map(|(n, v)| (n.as_ref().to_owned(), v.as_ref().to_owned()))
        .collect();
    vars.sort();
    let names: Vec<String> = file.systems.keys().cloned().collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for (variable, text) in vars {
        let error = |kind, message: String| {
            SettingsError::new(kind, origin, message).variable(Some(&variable))
        };
        let spelled = |system: &str, key: Key| env_var_with_prefix(prefix, system, key);
        let rest = &variable[prefix.len()..];
        let (system_part, key_part, key) = match claim(rest, &names) {
            None => continue,
            Some(Claim::SingleUnderscore { system, key }) => {
                return Err(error(
                    ErrorKind::Malformed,
                    format!(
                        "expected `{prefix}<SYSTEM>__<KEY>` with a double underscore between system and key: did you mean `{}`?",
                        spelled(&system, key)
                    ),
                )
                .system(&system)
                .at_key(key));
            }
            Some(Claim::Override {
                system,
                key_part,
                key,
            }) => (system, key_part, key),
        };
        if system_part.is_empty() {
            return Err(error(
                ErrorKind::Malformed,
                format!(
                    "expected `{prefix}<SYSTEM>__<KEY>` with both parts named, such as `{}`",
                    spelled("sber", key)
                ),
            ));
        }
        let system = system_part.to_ascii_lowercase();
        let Some(raw) = file.systems.get_mut(&system) else {
            let hint = did_you_mean_as(&system, names.iter().copied(), |s| spelled(s, key));
            return Err(error(
                ErrorKind::UnknownSystem,
                format!(
                    "no system `{system}` in {origin}; {hint}known systems: {}",
                    quoted_list(names.iter().copied())
                ),
            )
            .system(&system));
        };
        let exact = key_part.to_ascii_lowercase() == key.name();
        if !exact {
            return Err(error(
                ErrorKind::UnknownKey,
                format!(
                    "no key `{}`; did you mean `{}`?",
                    key_part.to_ascii_lowercase(),
                    spelled(&system, key)
                ),
            )
            .system(&system));
        }
        let value = raw::from_env(key, &text).map_err(|expected| {
            error(
                ErrorKind::Malformed,
                format!("got {text:?}, expected {expected}"),
            )
            .system(&system)
            .at_key(key)
        })?;
        raw.entries.insert(
            key,
            Entry {
                value,
                source: Source::Variable(variable.clone()),
            },
        );
    }
    Ok(())
}
