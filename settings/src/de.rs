//! serde: `Settings` and `SystemSettings` deserialise from any self-describing format
//! (a figment or config-rs configuration, JSON, TOML), through the same validation.

use serde::de::{Deserialize, Deserializer, Error};

use crate::raw::{check_system_name, RawFile, RawSystem, Table};
use crate::{Settings, SystemSettings};

/// The origin errors of deserialised settings name.
const ORIGIN: &str = "resilience settings";

/// The file's shape: `systems` (one table per system) and an optional `defaults`.
/// Durations are numbers of seconds or strings with a unit (`"500ms"`). No
/// `CLIENT_…` overrides are applied here: the configuration library that deserialises
/// it layers its own sources (figment's `Env`, config-rs's `Environment`).
impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(deserializer)?;
        let file = RawFile::from_table(table, ORIGIN).map_err(D::Error::custom)?;
        Settings::resolve(file, ORIGIN).map_err(D::Error::custom)
    }
}

/// One system's table, with its name as the key `name` (`name = "sber"`), since
/// alone it has no `[systems.NAME]` to take it from.
impl<'de> Deserialize<'de> for SystemSettings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut table = toml::Table::deserialize(deserializer)?;
        let name = match table.remove("name") {
            Some(toml::Value::String(name)) => name,
            Some(_) => {
                return Err(D::Error::custom(
                    "`name` must be the system's name, a string such as \"sber\"",
                ))
            }
            None => {
                return Err(D::Error::custom(
                    "a system's settings need its `name`, such as `name = \"sber\"`",
                ))
            }
        };
        check_system_name(&name, ORIGIN).map_err(D::Error::custom)?;
        let raw =
            RawSystem::from_table(Table::System(&name), table, ORIGIN).map_err(D::Error::custom)?;
        raw.resolve(&name, ORIGIN).map_err(D::Error::custom)
    }
}
