//! `tune --write FILE`: the settings file with each system's recommended keys changed,
//! every other line, comment and the file's layout kept (`toml_edit`), written only once
//! it loads as `outbound-guard check` loads it, to the settings tried.

use std::collections::BTreeMap;
use std::path::Path;

use outbound_guard_settings::{Key, Loader, SystemSettings};
use toml_edit::{DocumentMut, Item, Value};

use crate::failure::Failure;

/// One setting's change: each key changed and its new value as the settings file
/// would write it.
type Change = BTreeMap<Key, String>;

/// A key's value as the file writes it: a number for a share or a count, a string with
/// its unit for a duration.
fn value_of(key: Key, text: &str) -> Value {
    let number = match key {
        Key::CbFailureRate => text.parse::<f64>().ok().map(Value::from),
        Key::CbWindowSize | Key::CbMinCalls | Key::CbHalfOpenCalls | Key::MaxConnections => {
            text.parse::<i64>().ok().map(Value::from)
        }
        _ => None,
    };
    number.unwrap_or_else(|| Value::from(text))
}

/// `text` (the settings file) with `changes` made, one per system.
pub(crate) fn edit(text: &str, changes: &[(&str, &Change)]) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    for (system, change) in changes {
        let table = doc
            .get_mut("systems")
            .and_then(|s| s.get_mut(system))
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| format!("no `[systems.{system}]` table to change"))?;
        for (key, text) in *change {
            let mut value = value_of(*key, text);
            match table.get_mut(key.name()) {
                // The key keeps its place and the comments before it; a comment after
                // the old value stays after the new one.
                Some(old) => {
                    if let Some(decor) = old.as_value().map(|v| v.decor().clone()) {
                        *value.decor_mut() = decor;
                    }
                    *old = Item::Value(value);
                }
                None => {
                    table.insert(key.name(), Item::Value(value));
                }
            }
        }
    }
    Ok(doc.to_string())
}

/// Writes `text` with `changes` to `to`, once it loads (with `vars`, the overrides the
/// settings were tried with) to exactly the settings tried (`tried`, by system).
pub(crate) fn write(
    text: &str,
    changes: &[(&str, &Change)],
    tried: &[&SystemSettings],
    vars: &[(String, String)],
    to: &Path,
) -> Result<(), Failure> {
    let origin = to.display().to_string();
    let edited = edit(text, changes)
        .map_err(|e| Failure::Usage(format!("--write {origin}: cannot change the file: {e}")))?;
    let loaded = Loader::new()
        .env(vars.iter().cloned())
        .parse(&edited, &origin)
        .map_err(|e| {
            Failure::Usage(format!(
                "--write {origin}: the changed file does not load, so it is not written: {e}"
            ))
        })?;
    for want in tried {
        if loaded.system(want.name()) != Some(*want) {
            return Err(Failure::Usage(format!(
                "--write {origin}: `[systems.{}]` of the changed file does not load to the settings tried, so it is not written",
                want.name()
            )));
        }
    }
    // Written beside it and renamed: a reader never sees half a file.
    let partial = to.with_extension("toml.partial");
    std::fs::write(&partial, edited)
        .and_then(|()| std::fs::rename(&partial, to))
        .map_err(|e| Failure::Io(format!("cannot write {origin}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_changed_keys_change_and_comments_stay() {
        let text = "# payments\n[systems.sber]\n# the guide's 30% for payments\ncb_failure_rate = 0.3 # critical\nread_timeout = \"1s\"\n\n[systems.receipt]\ncb_failure_rate = 0.5\n";
        let change: Change = [
            (Key::CbFailureRate, "0.6".to_owned()),
            (Key::CbOpenDuration, "5s".to_owned()),
            (Key::CbWindowSize, "20".to_owned()),
        ]
        .into_iter()
        .collect();
        let edited = edit(text, &[("sber", &change)]).unwrap();
        assert_eq!(
            edited,
            "# payments\n[systems.sber]\n# the guide's 30% for payments\ncb_failure_rate = 0.6 # critical\nread_timeout = \"1s\"\ncb_window_size = 20\ncb_open_duration = \"5s\"\n\n[systems.receipt]\ncb_failure_rate = 0.5\n"
        );
        assert!(edit(text, &[("nope", &change)])
            .unwrap_err()
            .contains("[systems.nope]"));
    }
}
