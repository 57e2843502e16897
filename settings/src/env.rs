//! Environment overrides: `CLIENT_SBER__CB_FAILURE_RATE=0.5` sets `cb_failure_rate` of
//! system `sber` at startup, without a rebuild.

use crate::error::{ErrorKind, SettingsError};
use crate::keys::{key_list, Key};
use crate::raw::{self, Entry, RawFile};
use crate::ENV_PREFIX;

/// The process environment's variables that start with [`ENV_PREFIX`]. One shaped as an
/// override (`CLIENT_…__…`) whose name or value is not Unicode is an error; another
/// program's `CLIENT_…` variable is left alone, Unicode or not.
pub(crate) fn process_vars() -> Result<Vec<(String, String)>, SettingsError> {
    let mut vars = Vec::new();
    for (name, value) in std::env::vars_os() {
        let lossy = name.to_string_lossy();
        if !lossy.starts_with(ENV_PREFIX) {
            continue;
        }
        let override_shaped = lossy[ENV_PREFIX.len()..].contains("__");
        match (name.to_str(), value.to_str()) {
            (Some(name), Some(value)) => vars.push((name.to_owned(), value.to_owned())),
            _ if !override_shaped => {}
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

/// Applies every `CLIENT_<SYSTEM>__<KEY>` variable to the file's tables.
pub(crate) fn apply<I, K, V>(file: &mut RawFile, origin: &str, vars: I) -> Result<(), SettingsError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    // Sorted so that the first error reported does not depend on the environment's order.
    let mut vars: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(name, _)| name.as_ref().starts_with(ENV_PREFIX))
        .map(|(n, v)| (n.as_ref().to_owned(), v.as_ref().to_owned()))
        .collect();
    vars.sort();
    for (variable, text) in vars {
        let error = |kind, message: String| {
            SettingsError::new(kind, origin, message).variable(Some(&variable))
        };
        let rest = &variable[ENV_PREFIX.len()..];
        let Some((system_part, key_part)) = rest.split_once("__") else {
            // `CLIENT_ID` belongs to somebody else; `CLIENT_SBER_CB_FAILURE_RATE` and
            // `CLIENT_SBER` (no key at all) are mistakes about a system we know.
            let lower = rest.to_ascii_lowercase();
            let typo = file
                .systems
                .keys()
                .any(|s| lower == *s || lower.starts_with(&format!("{s}_")));
            if !typo {
                continue;
            }
            return Err(error(
                ErrorKind::Malformed,
                format!(
                    "expected `{ENV_PREFIX}<SYSTEM>__<KEY>` with a double underscore between system and key, such as `CLIENT_SBER__CB_FAILURE_RATE`"
                ),
            ));
        };
        if system_part.is_empty() || key_part.is_empty() {
            return Err(error(
                ErrorKind::Malformed,
                format!(
                    "expected `{ENV_PREFIX}<SYSTEM>__<KEY>` with both parts named, such as `CLIENT_SBER__CB_FAILURE_RATE`"
                ),
            ));
        }
        let system = system_part.to_ascii_lowercase();
        let Some(raw) = file.systems.get_mut(&system) else {
            let hint = crate::system::suggest(&system, file.systems.keys().map(String::as_str))
                .map(|s| format!("did you mean `{}`? ", s.to_ascii_uppercase()))
                .unwrap_or_default();
            return Err(error(
                ErrorKind::UnknownSystem,
                format!(
                    "no system `{system}` in {origin}; {hint}known systems: {}",
                    crate::quoted_list(file.systems.keys().map(String::as_str))
                ),
            ));
        };
        let key_name = key_part.to_ascii_lowercase();
        let Some(key) = Key::from_name(&key_name) else {
            let hint = crate::system::suggest(&key_name, crate::KEYS.iter().map(|k| k.name()))
                .map(|s| format!("did you mean `{}`? ", s.to_ascii_uppercase()))
                .unwrap_or_default();
            return Err(error(
                ErrorKind::UnknownKey,
                format!(
                    "unknown key `{key_name}`; {hint}allowed keys: {}",
                    key_list()
                ),
            ));
        };
        let value = raw::from_env(key, &text).map_err(|expected| {
            error(
                ErrorKind::Malformed,
                format!("got {text:?}, expected {expected}"),
            )
        })?;
        raw.entries.insert(
            key,
            Entry {
                value,
                variable: Some(variable.clone()),
            },
        );
    }
    Ok(())
}
