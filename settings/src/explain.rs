//! Where each effective value came from, for `outbound-guard explain`: the guide's
//! default, a rule deriving it from other keys, the `[defaults]` table, the system's own
//! table (with its line), or an environment variable.
//!
//! Not public API: shared with the `outbound-guard` command, may change in any release.

use std::collections::BTreeMap;

use crate::env;
use crate::error::SettingsError;
use crate::keys::{Key, ENV_PREFIX, KEYS};
use crate::raw::{RawFile, Source};
use crate::span::Location;

/// Where one key's effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Not set anywhere: the guide's default.
    Guide,
    /// Not set anywhere: derived from other keys by the rule given (`read_timeout / 2`).
    Derived(&'static str),
    /// Not set anywhere, and without a default (`base_url`).
    Unset,
    /// The `[defaults]` table, where it is written.
    Defaults(Option<Location>),
    /// The system's own `[systems.NAME]` table, where it is written.
    Table(Option<Location>),
    /// An environment variable, by name.
    Variable(String),
}

/// The rule that derives `key`'s default from other keys, if one does.
pub fn derivation(key: Key) -> Option<&'static str> {
    match key {
        Key::CbSlowThreshold => Some("read_timeout / 2"),
        Key::MaxKeepalive => Some("max_connections × 1.2, rounded up"),
        Key::BulkheadWait => Some("connect_timeout"),
        Key::CbOpenMax => Some("5 min, or cb_open_duration if longer"),
        _ => None,
    }
}

/// Every system's keys, in the guide's order, each with where its value came from,
/// after the `[defaults]` table and the `CLIENT_…` overrides in `vars` are applied
/// (the same parsing and overrides as [`Settings::load_with_env`](crate::Settings::load_with_env)).
/// Validate with that first: this does not check the rules between values.
///
/// # Errors
///
/// As [`Settings::load_with_env`](crate::Settings::load_with_env), for a file that does
/// not parse or an override that does not apply.
pub fn origins<I, K, V>(
    text: &str,
    origin: &str,
    vars: I,
) -> Result<BTreeMap<String, Vec<(Key, Origin)>>, SettingsError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut file = RawFile::parse(text, origin)?;
    env::apply(&mut file, origin, ENV_PREFIX, vars)?;
    file.apply_defaults();
    Ok(file
        .systems
        .iter()
        .map(|(name, raw)| {
            let keys = KEYS
                .into_iter()
                .map(|key| {
                    let location = raw.locations.get(&key).copied();
                    let origin = match raw.entries.get(&key).map(|e| &e.source) {
                        Some(Source::Table) => Origin::Table(location),
                        Some(Source::Defaults) => Origin::Defaults(location),
                        Some(Source::Variable(v)) => Origin::Variable(v.clone()),
                        None if key == Key::BaseUrl => Origin::Unset,
                        None => derivation(key).map_or(Origin::Guide, Origin::Derived),
                    };
                    (key, origin)
                })
                .collect();
            (name.clone(), keys)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_source() {
        let text =
            "[defaults]\ncb_open_duration = \"10s\"\n[systems.sber]\ncb_failure_rate = 0.3\n";
        let all = origins(text, "r.toml", [("CLIENT_SBER__READ_TIMEOUT", "20")]).unwrap();
        let sber: BTreeMap<Key, Origin> = all["sber"].iter().cloned().collect();
        assert_eq!(
            sber[&Key::CbFailureRate],
            Origin::Table(Some(Location {
                line: 4,
                column: 19
            }))
        );
        assert_eq!(
            sber[&Key::CbOpenDuration],
            Origin::Defaults(Some(Location {
                line: 2,
                column: 20
            }))
        );
        assert_eq!(
            sber[&Key::ReadTimeout],
            Origin::Variable("CLIENT_SBER__READ_TIMEOUT".into())
        );
        // Each derived default names its rule.
        for (key, rule) in [
            (Key::CbSlowThreshold, "read_timeout / 2"),
            (Key::MaxKeepalive, "max_connections × 1.2, rounded up"),
            (Key::BulkheadWait, "connect_timeout"),
            (Key::CbOpenMax, "5 min, or cb_open_duration if longer"),
        ] {
            assert_eq!(sber[&key], Origin::Derived(rule), "{key}");
        }
        assert_eq!(sber[&Key::CbWindowSize], Origin::Guide);
        assert_eq!(sber[&Key::BaseUrl], Origin::Unset);
    }
}
