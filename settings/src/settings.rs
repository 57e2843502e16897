//! Every system of one service, validated: [`Settings`] and what it answers.

use std::collections::BTreeMap;

use crate::builder;
use crate::error::{ErrorKind, SettingsError};
use crate::raw;
use crate::suggest::quoted_list;
use crate::system::SystemSettings;

/// Every system of one service, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    origin: String,
    systems: BTreeMap<String, SystemSettings>,
}

impl Settings {
    /// Settings of systems built by code ([`SystemSettings::builder`]), each already
    /// validated.
    ///
    /// # Errors
    ///
    /// Two systems of one name ([`ErrorKind::SystemName`]).
    pub fn from_systems(
        systems: impl IntoIterator<Item = SystemSettings>,
    ) -> Result<Self, SettingsError> {
        let mut map = BTreeMap::new();
        for system in systems {
            let name = system.name().to_owned();
            if map.insert(name.clone(), system).is_some() {
                return Err(SettingsError::new(
                    ErrorKind::SystemName,
                    builder::ORIGIN,
                    format!("two systems named `{name}`: each system has one entry"),
                )
                .system(&name));
            }
        }
        Ok(Settings {
            origin: builder::ORIGIN.to_owned(),
            systems: map,
        })
    }

    /// Checks that every system in `systems` has an entry: an error of kind
    /// [`ErrorKind::MissingSystem`] naming each one missing.
    ///
    /// # Errors
    ///
    /// When any of `systems` has no entry.
    pub fn require_systems<'a>(
        &self,
        systems: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), SettingsError> {
        self.require(systems.into_iter().map(|name| (name, None)))
    }

    /// [`require_systems`](Self::require_systems), each system with what declared it, if
    /// known: the error names it (several declarations of one system are all named).
    pub(crate) fn require<'a>(
        &self,
        systems: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Result<(), SettingsError> {
        let mut missing: Vec<(&str, Vec<&str>)> = Vec::new();
        for (name, by) in systems {
            if self.systems.contains_key(name) {
                continue;
            }
            let at = missing
                .iter()
                .position(|(m, _)| *m == name)
                .unwrap_or_else(|| {
                    missing.push((name, Vec::new()));
                    missing.len() - 1
                });
            if let Some(by) = by {
                if !missing[at].1.contains(&by) {
                    missing[at].1.push(by);
                }
            }
        }
        let Some((first, _)) = missing.first() else {
            return Ok(());
        };
        let first = *first;
        let tables: Vec<String> = missing
            .iter()
            .map(|(m, _)| format!("[systems.{m}]"))
            .collect();
        let declared: Vec<String> = missing
            .iter()
            .filter(|(_, by)| !by.is_empty())
            .map(|(m, by)| {
                if missing.len() == 1 {
                    by.join(" and ")
                } else {
                    format!("`{m}` by {}", by.join(" and "))
                }
            })
            .collect();
        let why = if declared.is_empty() {
            format!(
                "{} required of these settings",
                if missing.len() == 1 {
                    "it is"
                } else {
                    "they are"
                }
            )
        } else {
            format!(
                "this binary calls {}, declared by {}",
                if missing.len() == 1 { "it" } else { "them" },
                declared.join("; ")
            )
        };
        Err(SettingsError::new(
            ErrorKind::MissingSystem,
            &self.origin,
            format!(
                "missing {}: {why}; add a `[systems.{first}]` table (the settings hold {})",
                quoted_list(tables.iter().map(String::as_str)),
                quoted_list(self.names()),
            ),
        )
        .system(first))
    }

    /// The file these settings came from, as given to the loader: a mounted file's path,
    /// or, from `outbound_guard::settings!()` without one, the compiled-in file named
    /// relative to its crate, `resilience.toml (compiled in)`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// One system's settings, if the file has an entry for it.
    pub fn system(&self, name: &str) -> Option<&SystemSettings> {
        self.systems.get(name)
    }

    /// Every system, in name order.
    pub fn systems(&self) -> impl ExactSizeIterator<Item = &SystemSettings> {
        self.systems.values()
    }

    /// Every system's name, in order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.systems.keys().map(String::as_str)
    }

    /// Validates a raw file (defaults applied) into settings.
    pub(crate) fn resolve(mut file: raw::RawFile, origin: &str) -> Result<Self, SettingsError> {
        file.apply_defaults();
        let systems = file
            .systems
            .into_iter()
            .map(|(name, raw)| {
                let resolved = raw.resolve(&name, origin)?;
                Ok((name, resolved))
            })
            .collect::<Result<_, SettingsError>>()?;
        Ok(Settings {
            origin: origin.to_owned(),
            systems,
        })
    }
}
