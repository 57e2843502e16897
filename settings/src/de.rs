//! serde: `Settings` and `SystemSettings` deserialise from any self-describing format
//! (a figment or config-rs configuration, JSON, TOML), through the same validation, and
//! serialise to the same shape.

use serde::de::{Deserialize, Deserializer, Error};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::keys::for_each_key;
use crate::raw::{check_system_name, RawFile, RawSystem, Table};
use crate::settings::Settings;
use crate::system::SystemSettings;

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

/// One system as its table: every key with its resolved value (durations as strings
/// with units, which read back exactly), and `name` when `named`.
/// Writes one key of a serialised system: durations as strings with their unit, which
/// read back exactly; an unset `base_url` not at all.
macro_rules! serialize {
    ($map:ident, $name:expr, Url, $v:expr) => {
        if let Some(url) = $v {
            $map.serialize_entry($name, url)?;
        }
    };
    ($map:ident, $name:expr, Seconds, $v:expr) => {
        $map.serialize_entry($name, &humantime::format_duration($v).to_string())?
    };
    ($map:ident, $name:expr, Mode, $v:expr) => {
        $map.serialize_entry($name, $v.as_str())?
    };
    ($map:ident, $name:expr, $kind:ident, $v:expr) => {
        $map.serialize_entry($name, &$v)?
    };
}

/// [`serialize_keys`], from the table of keys.
macro_rules! serialize_keys {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:ident: $kind:ident { $($param:tt)* }
    )*) => {
        /// Writes every key of `system` into `map`, resolved.
        fn serialize_keys<M: SerializeMap>(
            map: &mut M,
            system: &SystemSettings,
        ) -> Result<(), M::Error> {
            $(serialize!(map, stringify!($name), $kind, system.$name());)*
            Ok(())
        }
    };
}

for_each_key!(serialize_keys);

fn serialize_system<M: SerializeMap>(
    map: &mut M,
    system: &SystemSettings,
    named: bool,
) -> Result<(), M::Error> {
    if named {
        map.serialize_entry("name", system.name())?;
    }
    serialize_keys(map, system)
}

/// Every key of the system, resolved, and its `name`: what [`Deserialize`] reads back
/// (for figment's `Serialized::defaults`). It is data, so `base_url` is written whole,
/// credentials included: to log the settings in effect, use `Debug`, which masks them
/// ([`mask_url`](crate::mask_url)).
impl Serialize for SystemSettings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        serialize_system(&mut map, self, true)?;
        map.end()
    }
}

/// `systems`, one table per system with every key resolved: what [`Deserialize`] reads
/// back. Like [`SystemSettings`]' form, it carries each `base_url` whole; log `Debug`
/// instead, which masks credentials.
impl Serialize for Settings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Table<'a>(&'a SystemSettings);
        impl Serialize for Table<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                serialize_system(&mut map, self.0, false)?;
                map.end()
            }
        }
        struct Systems<'a>(&'a Settings);
        impl Serialize for Systems<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.names().len()))?;
                for system in self.0.systems() {
                    map.serialize_entry(system.name(), &Table(system))?;
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("systems", &Systems(self))?;
        map.end()
    }
}
