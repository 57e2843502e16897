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
    print!("{}", render(&settings, &text, &vars(env))?);
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
        for (key, from) in keys {
            let value = values
                .get(key.name())
                .map_or_else(|| "(not set)".to_owned(), |v| shown(*key, v));
            let from = describe(from, origin, system.name());
            let _ = writeln!(out, "  {:<20} = {value:<28} {from}", key.name());
        }
        let _ = writeln!(
            out,
            "  {:<20} = {:<28} derived: max_connections × 0.8, at least 1",
            "(bulkhead permits)",
            system.bulkhead_permits(),
        );
    }
    Ok(out)
}

/// Every key's resolved value, as the settings serialise them (durations with units).
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
