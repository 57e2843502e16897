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
        let missing: Vec<&str> = systems
            .into_iter()
            .filter(|name| !self.systems.contains_key(*name))
            .collect();
        let Some(first) = missing.first() else {
            return Ok(());
        };
        let tables: Vec<String> = missing.iter().map(|m| format!("[systems.{m}]")).collect();
        Err(SettingsError::new(
            ErrorKind::MissingSystem,
            &self.origin,
            format!(
                "missing {}: this binary was compiled with `#[circuit_breaker]` calls to {}; add a `[systems.{first}]` table (the settings hold {})",
                quoted_list(tables.iter().map(String::as_str)),
                if missing.len() == 1 { "it" } else { "them" },
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
