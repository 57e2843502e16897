//! The file as written: which keys each system sets, before defaults and validation.

use std::collections::BTreeMap;
use std::num::{IntErrorKind, ParseIntError};

use crate::error::{ErrorKind, SettingsError};
use crate::keys::{key_list, Key, Kind, KEYS};
use crate::span::{Location, Spans, TableSpans};
use crate::suggest::did_you_mean;

/// A value as written in the file, an environment variable or code.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Text(String),
    Number(f64),
    Integer(i64),
    /// A duration in seconds; `unit` when it was written with one (`"500ms"`, or a
    /// `Duration` in code), so that it is taken as meant.
    Seconds {
        value: f64,
        unit: bool,
    },
}

/// Where a value came from, for error messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    /// The system's own table (or the builder).
    Table,
    /// The file's `[defaults]` table.
    Defaults,
    /// An environment variable, by name.
    Variable(String),
}

/// One key's value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub value: Value,
    pub source: Source,
}

/// One `[systems.NAME]` table, or the `[defaults]` table.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RawSystem {
    pub entries: BTreeMap<Key, Entry>,
    /// Where each value set in the file is written (its own table's, or the
    /// `[defaults]` table's once defaults are applied).
    pub locations: BTreeMap<Key, Location>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RawFile {
    pub defaults: RawSystem,
    pub systems: BTreeMap<String, RawSystem>,
}

/// Which table a problem is in.
#[derive(Clone, Copy)]
pub(crate) enum Table<'a> {
    System(&'a str),
    Defaults,
}

impl Table<'_> {
    pub(crate) fn error(
        self,
        kind: ErrorKind,
        origin: &str,
        message: impl Into<String>,
    ) -> SettingsError {
        let error = SettingsError::new(kind, origin, message);
        match self {
            Table::System(system) => error.system(system),
            Table::Defaults => error.in_defaults(),
        }
    }
}

impl RawFile {
    pub fn parse(text: &str, origin: &str) -> Result<Self, SettingsError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            SettingsError::new(
                ErrorKind::Syntax,
                origin,
                format!("not valid TOML: {}", e.to_string().trim_end()),
            )
            .at(e.span().map(|span| Location::of_offset(text, span.start)))
        })?;
        Self::from_table_spanned(table, origin, &Spans::index(text))
    }

    pub fn from_table(table: toml::Table, origin: &str) -> Result<Self, SettingsError> {
        Self::from_table_spanned(table, origin, &Spans::default())
    }

    /// Reads the file's tables; `spans` says where each key is written, for errors.
    pub(crate) fn from_table_spanned(
        table: toml::Table,
        origin: &str,
        spans: &Spans,
    ) -> Result<Self, SettingsError> {
        let no_spans = TableSpans::default();
        let top = |name: &str| spans.top.get(name).copied();
        let mut file = RawFile::default();
        for (name, value) in table {
            match (name.as_str(), value) {
                ("systems", toml::Value::Table(systems)) => {
                    for (system, table) in systems {
                        let system_spans = spans.systems.get(&system).unwrap_or(&no_spans);
                        check_system_name(&system, origin)
                            .map_err(|e| e.at(system_spans.header))?;
                        let toml::Value::Table(table) = table else {
                            return Err(SettingsError::new(
                                ErrorKind::Syntax,
                                origin,
                                format!("`systems.{system}` must be a table, written `[systems.{system}]`"),
                            )
                            .system(&system)
                            .at(system_spans.header));
                        };
                        let raw = RawSystem::from_table_spanned(
                            Table::System(&system),
                            table,
                            origin,
                            system_spans,
                        )?;
                        file.systems.insert(system, raw);
                    }
                }
                ("systems", _) => {
                    return Err(SettingsError::new(
                        ErrorKind::Syntax,
                        origin,
                        "`systems` must be a table of tables, written `[systems.NAME]`",
                    )
                    .at(top("systems")))
                }
                ("defaults", toml::Value::Table(table)) => {
                    file.defaults = RawSystem::from_table_spanned(
                        Table::Defaults,
                        table,
                        origin,
                        &spans.defaults,
                    )?;
                    if file.defaults.entries.contains_key(&Key::BaseUrl) {
                        return Err(Table::Defaults
                            .error(
                                ErrorKind::UnknownKey,
                                origin,
                                "`base_url` cannot be a default: each system lives at its own address; set it in its `[systems.NAME]` table",
                            )
                            .at_key(Key::BaseUrl)
                            .at(spans.defaults.key(Key::BaseUrl.name())));
                    }
                }
                ("defaults", _) => {
                    return Err(SettingsError::new(
                        ErrorKind::Syntax,
                        origin,
                        "`defaults` must be a table, written `[defaults]`",
                    )
                    .at(top("defaults")))
                }
                (other, _) => {
                    return Err(SettingsError::new(
                        ErrorKind::Syntax,
                        origin,
                        format!(
                            "unknown top-level key `{other}`: the file holds one `[systems.NAME]` table per external system, and optionally a `[defaults]` table"
                        ),
                    )
                    .at(top(other)))
                }
            }
        }
        Ok(file)
    }

    /// Fills every system's unset keys from `[defaults]`: a template copied into each
    /// system, never a shared breaker.
    pub fn apply_defaults(&mut self) {
        for system in self.systems.values_mut() {
            for (key, entry) in &self.defaults.entries {
                if system.entries.contains_key(key) {
                    continue;
                }
                system.entries.insert(
                    *key,
                    Entry {
                        value: entry.value.clone(),
                        source: Source::Defaults,
                    },
                );
                if let Some(location) = self.defaults.locations.get(key) {
                    system.locations.insert(*key, *location);
                }
            }
        }
    }
}

impl RawSystem {
    pub(crate) fn from_table(
        table_name: Table<'_>,
        table: toml::Table,
        origin: &str,
    ) -> Result<Self, SettingsError> {
        Self::from_table_spanned(table_name, table, origin, &TableSpans::default())
    }

    /// Reads one table; `spans` says where its keys and values are written.
    pub(crate) fn from_table_spanned(
        table_name: Table<'_>,
        table: toml::Table,
        origin: &str,
        spans: &TableSpans,
    ) -> Result<Self, SettingsError> {
        let mut entries = BTreeMap::new();
        let mut locations = BTreeMap::new();
        for (name, value) in table {
            let Some(key) = Key::from_name(&name) else {
                let hint = did_you_mean(&name, KEYS.iter().map(|k| k.name()));
                return Err(table_name
                    .error(
                        ErrorKind::UnknownKey,
                        origin,
                        format!("unknown key `{name}`; {hint}allowed keys: {}", key_list()),
                    )
                    .at(spans.key(&name)));
            };
            let value = from_toml(key, value).map_err(|expected| {
                table_name
                    .error(ErrorKind::Malformed, origin, expected)
                    .at_key(key)
                    .at(spans.value(&name))
            })?;
            if let Some(location) = spans.value(&name) {
                locations.insert(key, location);
            }
            entries.insert(
                key,
                Entry {
                    value,
                    source: Source::Table,
                },
            );
        }
        Ok(RawSystem { entries, locations })
    }
}

/// What a key of `kind` accepts, in words.
pub(crate) fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Url => "a URL string such as \"http://127.0.0.1:8080\"",
        Kind::Seconds => {
            "a number of seconds such as 2.5, or a duration with its unit such as \"500ms\" or \"30s\""
        }
        Kind::Count => "a whole number such as 10",
        Kind::Rate => "a share between 0 and 1 such as 0.5",
        Kind::Factor => "a number such as 2.0",
        Kind::Mode => "one of \"auto\", \"forced_open\", \"disabled\", \"observe\"",
        Kind::Bulkhead => "one of \"fixed\", \"adaptive\"",
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "an integer past 2^52 seconds or as a share is out of range either way"
)]
fn from_toml(key: Key, value: toml::Value) -> Result<Value, String> {
    let kind = key.kind();
    let expected = || format!("expected {}", expected(kind));
    match (kind, value) {
        (Kind::Url | Kind::Mode | Kind::Bulkhead, toml::Value::String(s)) => Ok(Value::Text(s)),
        (Kind::Count, toml::Value::Integer(i)) => Ok(Value::Integer(i)),
        (Kind::Rate | Kind::Factor, toml::Value::Integer(i)) => Ok(Value::Number(i as f64)),
        (Kind::Rate | Kind::Factor, toml::Value::Float(f)) => Ok(Value::Number(f)),
        (Kind::Seconds, toml::Value::Integer(i)) => Ok(Value::Seconds {
            value: i as f64,
            unit: false,
        }),
        (Kind::Seconds, toml::Value::Float(f)) => Ok(Value::Seconds {
            value: f,
            unit: false,
        }),
        (Kind::Seconds, toml::Value::String(s)) => {
            duration_with_unit(&s).map_err(|e| format!("got {s:?}: {e}; {}", expected()))
        }
        _ => Err(expected()),
    }
}

/// A duration string with its unit (`"500ms"`, `"30s"`, `"1m 30s"`), read by `humantime`;
/// also one fractional number with a unit that `humantime` does not take: finer than a
/// nanosecond (`"2.5ns"`, `"3.0001us"`), or any fraction (`"2.5s"`) under the `humantime`
/// 2 releases before it read fractions.
fn duration_with_unit(text: &str) -> Result<Value, String> {
    let text = text.trim();
    let seconds = match humantime::parse_duration(text) {
        Ok(duration) => duration.as_secs_f64(),
        Err(e) => fractional(text).ok_or_else(|| e.to_string())?,
    };
    Ok(Value::Seconds {
        value: seconds,
        unit: true,
    })
}

/// `"2.5s"`, `"0.5h"`, `"1.5ms"`: a decimal number and one unit, in seconds.
fn fractional(text: &str) -> Option<f64> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" | "mins" => 60.0,
        "h" | "hr" | "hrs" => 3600.0,
        _ => return None,
    };
    Some(number * scale).filter(|s| s.is_finite())
}

/// Parses an environment variable's value for `key`.
pub(crate) fn from_env(key: Key, text: &str) -> Result<Value, &'static str> {
    let kind = key.kind();
    let text = text.trim();
    match kind {
        Kind::Url | Kind::Mode | Kind::Bulkhead => Ok(Value::Text(text.to_owned())),
        Kind::Count => text
            .parse()
            .map(Value::Integer)
            .map_err(|e: ParseIntError| match e.kind() {
                IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
                    "a whole number such as 10 (this one is too large to be a count)"
                }
                _ => expected(kind),
            }),
        Kind::Rate | Kind::Factor => number(text).map(Value::Number).ok_or(expected(kind)),
        Kind::Seconds => match number(text) {
            Some(value) => Ok(Value::Seconds { value, unit: false }),
            None => duration_with_unit(text).map_err(|_| expected(kind)),
        },
    }
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// The system name the guide forbids (R-RES-CB-X3): one breaker per system, never a
/// shared `default`.
pub const FORBIDDEN_SYSTEM: &str = "default";

/// System names become environment variable parts (`CLIENT_SBER__…`), so they are
/// `lower_snake_case` without a double underscore; `default` is forbidden (R-RES-CB-X3).
pub(crate) fn check_system_name(name: &str, origin: &str) -> Result<(), SettingsError> {
    if name == FORBIDDEN_SYSTEM {
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

#[cfg(test)]
mod tests {
    use super::fractional;

    #[test]
    fn a_decimal_with_one_unit_reads_as_seconds() {
        for (text, seconds) in [
            ("2.5ns", 2.5e-9),
            ("2.5us", 2.5e-6),
            ("2.5µs", 2.5e-6),
            ("2.5ms", 2.5e-3),
            ("2.5s", 2.5),
            ("2.5 secs", 2.5),
            ("2.5m", 150.0),
            ("2.5min", 150.0),
            ("2.5h", 9000.0),
            ("2.5hrs", 9000.0),
            ("3s", 3.0),
        ] {
            let read = fractional(text).unwrap_or_else(|| panic!("{text:?} not read"));
            assert!(
                (read - seconds).abs() <= seconds * 1e-12,
                "{text:?}: {read} s, expected {seconds} s"
            );
        }
    }

    #[test]
    fn anything_else_is_not_a_decimal_with_one_unit() {
        let too_large = format!("1{}h", "0".repeat(400));
        for text in ["2.5", "2.5 days", "s", "2.5.1s", "1m 30s", &too_large] {
            assert_eq!(fractional(text), None, "{text:?}");
        }
    }
}
