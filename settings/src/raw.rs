//! The file as written: which keys each system sets, before defaults and validation.

use std::collections::BTreeMap;
use std::num::{IntErrorKind, ParseIntError};

use crate::error::{ErrorKind, SettingsError};
use crate::keys::{key_list, Key, Kind};

/// A value as written in the file or an environment variable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Text(String),
    Number(f64),
    Integer(i64),
}

/// One key's value and, when an environment variable set it, that variable's name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub value: Value,
    pub variable: Option<String>,
}

/// One `[systems.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RawSystem {
    pub entries: BTreeMap<Key, Entry>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RawFile {
    pub systems: BTreeMap<String, RawSystem>,
}

impl RawFile {
    pub fn parse(text: &str, origin: &str) -> Result<Self, SettingsError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            SettingsError::new(
                ErrorKind::Syntax,
                origin,
                format!("not valid TOML: {}", e.to_string().trim_end()),
            )
        })?;
        let mut file = RawFile::default();
        for (name, value) in table {
            if name != "systems" {
                return Err(SettingsError::new(
                    ErrorKind::Syntax,
                    origin,
                    format!(
                        "unknown top-level key `{name}`: the file holds one `[systems.NAME]` table per external system"
                    ),
                ));
            }
            let toml::Value::Table(systems) = value else {
                return Err(SettingsError::new(
                    ErrorKind::Syntax,
                    origin,
                    "`systems` must be a table of tables, written `[systems.NAME]`",
                ));
            };
            for (system, table) in systems {
                check_system_name(&system, origin)?;
                let toml::Value::Table(table) = table else {
                    return Err(SettingsError::new(
                        ErrorKind::Syntax,
                        origin,
                        format!("`systems.{system}` must be a table, written `[systems.{system}]`"),
                    )
                    .system(&system));
                };
                let raw = RawSystem::from_table(&system, table, origin)?;
                file.systems.insert(system, raw);
            }
        }
        Ok(file)
    }
}

impl RawSystem {
    fn from_table(system: &str, table: toml::Table, origin: &str) -> Result<Self, SettingsError> {
        let mut entries = BTreeMap::new();
        for (name, value) in table {
            let Some(key) = Key::from_name(&name) else {
                let hint = crate::system::suggest(&name, crate::KEYS.iter().map(|k| k.name()))
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
                return Err(SettingsError::new(
                    ErrorKind::UnknownKey,
                    origin,
                    format!("unknown key `{name}`; {hint}allowed keys: {}", key_list()),
                )
                .system(system));
            };
            let value = from_toml(key, value).map_err(|expected| {
                SettingsError::new(ErrorKind::Malformed, origin, format!("expected {expected}"))
                    .system(system)
                    .key(key.name())
            })?;
            entries.insert(
                key,
                Entry {
                    value,
                    variable: None,
                },
            );
        }
        Ok(RawSystem { entries })
    }
}

/// What a key of `kind` accepts, in words.
pub(crate) fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Url => "a URL string such as \"http://127.0.0.1:8080\"",
        Kind::Seconds => "a number of seconds such as 2.5",
        Kind::Count => "a whole number such as 10",
        Kind::Rate => "a share between 0 and 1 such as 0.5",
    }
}

fn from_toml(key: Key, value: toml::Value) -> Result<Value, &'static str> {
    let kind = key.kind();
    match (kind, value) {
        (Kind::Url, toml::Value::String(s)) => Ok(Value::Text(s)),
        (Kind::Count, toml::Value::Integer(i)) => Ok(Value::Integer(i)),
        (Kind::Seconds | Kind::Rate, toml::Value::Integer(i)) => Ok(Value::Number(i as f64)),
        (Kind::Seconds | Kind::Rate, toml::Value::Float(f)) => Ok(Value::Number(f)),
        _ => Err(expected(kind)),
    }
}

/// Parses an environment variable's value for `key`.
pub(crate) fn from_env(key: Key, text: &str) -> Result<Value, &'static str> {
    let kind = key.kind();
    let text = text.trim();
    match kind {
        Kind::Url => Ok(Value::Text(text.to_owned())),
        Kind::Count => text
            .parse()
            .map(Value::Integer)
            .map_err(|e: ParseIntError| match e.kind() {
                IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
                    "a whole number such as 10 (this one is too large to be a count)"
                }
                _ => expected(kind),
            }),
        Kind::Seconds | Kind::Rate => text
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Value::Number)
            .ok_or(expected(kind)),
    }
}

/// System names become environment variable parts (`CLIENT_SBER__…`), so they are
/// `lower_snake_case` without a double underscore; `default` is forbidden (R-RES-CB-X3).
pub(crate) fn check_system_name(name: &str, origin: &str) -> Result<(), SettingsError> {
    if name == crate::FORBIDDEN_SYSTEM {
        return Err(SettingsError::new(
            ErrorKind::SystemName,
            origin,
            "a system may not be named `default`: give each external system its own breaker, named after it (R-RES-CB-X3)",
        )
        .system(name));
    }
    let well_formed = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_');
    if well_formed {
        Ok(())
    } else {
        Err(SettingsError::new(
            ErrorKind::SystemName,
            origin,
            format!(
                "system name `{name}` is not allowed: use lower_snake_case (a-z, 0-9, single `_`, starting with a letter, at most 64 characters), since it becomes part of the variable `CLIENT_{}__…`",
                name.to_ascii_uppercase()
            ),
        )
        .system(name))
    }
}
