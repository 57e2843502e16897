//! `outbound-guard explain`: every effective value and where it came from, like
//! `git config --show-origin`.

use std::fmt::Write as _;
use std::path::PathBuf;

use outbound_guard_settings::explain::{origins, Origin};
use outbound_guard_settings::{mask_url, Key, Settings, SystemSettings};

use crate::args::EnvFlag;
use crate::failure::Failure;
use crate::load::{load, vars};

pub(crate) fn run(file: &PathBuf, env: &EnvFlag) -> Result<(), Failure> {
    // Validated first, by the loader a service uses: the same errors as at startup.
    let settings = load(file, env, &[])?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::Io(format!("cannot read {}: {e}", file.display())))?;
    crate::output::print(&render(&settings, &text, &vars(env))?)?;
    Ok(())
}

/// The explanation of `settings`, read from `text` with the overrides `vars`.
pub(crate) fn render(
    settings: &Settings,
    text: &str,
    vars: &[(String, String)],
) -> Result<String, Failure> {
    let origin = settings.origin();
    let all = origins(text, origin, vars.iter().cloned())?;
    let mut out = String::new();
    if settings.systems().len() == 0 {
        let _ = writeln!(out, "{origin}: no systems");
    }
    for (index, system) in settings.systems().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "[systems.{}]", system.name());
        let Some(keys) = all.get(system.name()) else {
            continue;
        };
        let values = values(system);
        let (mut set, mut restated) = (0, 0);
        for (key, from) in keys {
            let mut value = values
                .get(key.name())
                .map_or_else(|| "(not set)".to_owned(), |v| shown(*key, v));
            if is_set(from) {
                set += 1;
                if restates_default(system, *key) {
                    restated += 1;
                    value.push_str(" (default)");
                }
            }
            let from = describe(from, origin, system.name());
            let _ = writeln!(out, "  {:<20} = {value:<28} {from}", key.name());
        }
        let _ = writeln!(
            out,
            "  {:<20} = {:<28} derived: max_connections × 0.8, at least 1",
            "(bulkhead permits)",
            system.bulkhead_permits(),
        );
        if set > 0 {
            let _ = writeln!(out, "  {}", restated_line(restated, set));
        }
    }
    Ok(out)
}

/// Whether the value was set (in the file or the environment) rather than left to the
/// guide.
fn is_set(from: &Origin) -> bool {
    matches!(
        from,
        Origin::Defaults(_) | Origin::Table(_) | Origin::Variable(_)
    )
}

/// Whether `key`'s value in `system` is the one the guide gives it when it is not set:
/// the system read back, through the same validation, without the key (a derived
/// default from the other keys' values, as the loader derives it). Deleting such a
/// setting changes nothing. A `base_url` has no default.
fn restates_default(system: &SystemSettings, key: Key) -> bool {
    if key == Key::BaseUrl {
        return false;
    }
    let mut table = values(system);
    let Some(value) = table.remove(key.name()) else {
        return false;
    };
    serde_json::from_value::<SystemSettings>(serde_json::Value::Object(table))
        .is_ok_and(|without| values(&without).get(key.name()) == Some(&value))
}

/// The closing line of a system: how many of the keys set merely restate the guide.
fn restated_line(restated: usize, set: usize) -> String {
    let (keys, verb) = if set == 1 {
        ("key", "restates")
    } else {
        ("keys", "restate")
    };
    let mut line = format!("{restated} of {set} {keys} set {verb} the guide's defaults");
    if restated > 0 {
        line.push_str(" (marked `(default)`: deleting them changes nothing)");
    }
    line
}

/// Every key's resolved value and the system's `name`, as the settings serialise them
/// (durations with units), which read back as the same system.
fn values(system: &SystemSettings) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(system) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

fn shown(key: Key, value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) if key == Key::BaseUrl => format!("{:?}", mask_url(s)),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn describe(from: &Origin, origin: &str, system: &str) -> String {
    let at = |location: &Option<outbound_guard_settings::Location>| match location {
        Some(l) => format!("{origin}:{}:{}", l.line, l.column),
        None => origin.to_owned(),
    };
    match from {
        Origin::Guide => "the guide's default".to_owned(),
        Origin::Derived(rule) => format!("derived: {rule}"),
        Origin::Unset => "not set (no default)".to_owned(),
        Origin::Defaults(location) => format!("{} [defaults]", at(location)),
        Origin::Table(location) => format!("{} [systems.{system}]", at(location)),
        Origin::Variable(name) => format!("environment variable {name}"),
    }
}
