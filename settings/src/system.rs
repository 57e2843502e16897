//! One system's settings after defaults, derived values and validation.

use crate::error::{ErrorKind, SettingsError};
use crate::keys::{Key, Read, SystemSettings};
use crate::raw::{Entry, RawSystem, Source, Value};

/// The longest duration a key takes: a day.
const MAX_SECONDS: f64 = 86_400.0;
/// The smallest positive duration: one nanosecond, `Duration`'s resolution.
const MIN_SECONDS: f64 = 1e-9;
/// A duration written without a unit is seconds, as the guide writes them; one of this
/// many or more (over 16 minutes for a timeout) is surely milliseconds written without
/// their unit, so it must be written with one (`"35000ms"`, or `"20m"` if meant).
pub const UNITLESS_SECONDS_LIMIT: f64 = 1_000.0;

impl SystemSettings {
    /// The bulkhead's permits: `max_connections × 0.8`, at least 1 (R-RES-BH-3).
    pub fn bulkhead_permits(&self) -> usize {
        ((self.max_connections() as usize * 4) / 5).max(1)
    }

    /// The environment variable that overrides `key` of this system.
    pub fn env_var(&self, key: Key) -> String {
        crate::env_var(self.name(), key)
    }
}

/// Reads one key with its default, and reports problems against it.
pub(crate) struct Reader<'a> {
    system: &'a str,
    origin: &'a str,
    raw: &'a RawSystem,
}

impl Reader<'_> {
    fn entry(&self, key: Key) -> Option<&Entry> {
        self.raw.entries.get(&key)
    }

    /// Where the value of `key` is written in the file, unless a variable set it.
    fn location(&self, key: Key) -> Option<crate::Location> {
        match self.entry(key).map(|e| &e.source) {
            Some(Source::Table | Source::Defaults) => self.raw.locations.get(&key).copied(),
            _ => None,
        }
    }

    fn variable(&self, key: Key) -> Option<&str> {
        match self.entry(key).map(|e| &e.source) {
            Some(Source::Variable(name)) => Some(name),
            _ => None,
        }
    }

    fn fail(&self, kind: ErrorKind, key: Key, mut message: String) -> SettingsError {
        if self.entry(key).map(|e| &e.source) == Some(&Source::Defaults) {
            message.push_str(" (the value comes from the `[defaults]` table)");
        }
        SettingsError::new(kind, self.origin, message)
            .system(self.system)
            .at_key(key)
            .variable(self.variable(key))
            .at(self.location(key))
    }

    /// An ordering rule between `key` and `other` is broken: reported on `key`, naming
    /// the environment variable that set either of them (the override is what broke a
    /// file that was valid, whichever side it changed).
    fn fail_order(&self, key: Key, other: Key, message: String) -> SettingsError {
        let variable = self.variable(key).or_else(|| self.variable(other));
        let location = self.location(key).or_else(|| self.location(other));
        SettingsError::new(ErrorKind::Order, self.origin, message)
            .system(self.system)
            .at_key(key)
            .variable(variable)
            .at(location)
    }

    pub(crate) fn seconds(
        &self,
        key: Key,
        default: f64,
        allow_zero: bool,
    ) -> Result<f64, SettingsError> {
        let (value, unit) = match self.entry(key).map(|e| &e.value) {
            None => return Ok(default),
            Some(Value::Seconds { value, unit }) => (*value, *unit),
            Some(_) => unreachable_kind(),
        };
        if !unit && (UNITLESS_SECONDS_LIMIT..=MAX_SECONDS * 1000.0).contains(&value) {
            let hours = value / 3600.0;
            return Err(self.fail(
                ErrorKind::OutOfRange,
                key,
                format!(
                    "got {value} seconds ({hours:.1} hours), surely a unit mistake: a number without a unit is seconds; write \"{value}ms\" for milliseconds, or give the unit if you mean it (\"{}m\")",
                    (value / 60.0).round()
                ),
            ));
        }
        // A positive value under a nanosecond would become a zero `Duration`.
        let low_ok = if allow_zero {
            value >= 0.0
        } else {
            value >= MIN_SECONDS
        };
        if value.is_finite() && low_ok && value <= MAX_SECONDS {
            Ok(value)
        } else {
            let low = if allow_zero {
                "at least 0"
            } else {
                "greater than 0"
            };
            Err(self.fail(
                ErrorKind::OutOfRange,
                key,
                format!(
                    "got {value}, expected a number of seconds {low} and at most {MAX_SECONDS}"
                ),
            ))
        }
    }

    pub(crate) fn url(&self, key: Key) -> Result<Option<String>, SettingsError> {
        match self.entry(key).map(|e| &e.value) {
            None => Ok(None),
            Some(Value::Text(url)) => {
                let ok = (url.starts_with("http://") || url.starts_with("https://"))
                    && url.len() > "https://".len()
                    && !url.contains(char::is_whitespace);
                if ok {
                    Ok(Some(url.clone()))
                } else {
                    Err(self.fail(
                        ErrorKind::Malformed,
                        key,
                        format!(
                            "got {:?}, expected an absolute http:// or https:// URL",
                            crate::mask_url(url)
                        ),
                    ))
                }
            }
            Some(_) => unreachable_kind(),
        }
    }

    pub(crate) fn mode(&self, key: Key) -> Result<crate::CbMode, SettingsError> {
        match self.entry(key).map(|e| &e.value) {
            None => Ok(crate::CbMode::default()),
            Some(Value::Text(text)) => crate::CbMode::from_name(text.trim()).ok_or_else(|| {
                self.fail(
                    ErrorKind::Malformed,
                    key,
                    format!(
                        "got {text:?}, expected {}",
                        crate::raw::expected(crate::keys::Kind::Mode)
                    ),
                )
            }),
            Some(_) => unreachable_kind(),
        }
    }

    pub(crate) fn rate(&self, key: Key, default: f64) -> Result<f64, SettingsError> {
        let rate = match self.entry(key).map(|e| &e.value) {
            None => default,
            Some(Value::Number(n)) => *n,
            Some(_) => unreachable_kind(),
        };
        if rate > 0.0 && rate <= 1.0 {
            Ok(rate)
        } else {
            Err(self.fail(
                ErrorKind::OutOfRange,
                key,
                format!("got {rate}, expected a share greater than 0 and at most 1 (0.5 by default, 0.30 for critical systems)"),
            ))
        }
    }

    pub(crate) fn count(
        &self,
        key: Key,
        default: i64,
        min: i64,
        max: i64,
    ) -> Result<u32, SettingsError> {
        let value = match self.entry(key).map(|e| &e.value) {
            None => default,
            Some(Value::Integer(i)) => *i,
            Some(_) => unreachable_kind(),
        };
        match u32::try_from(value) {
            Ok(count) if (min..=max).contains(&value) => Ok(count),
            _ => Err(self.fail(
                ErrorKind::OutOfRange,
                key,
                format!("got {value}, expected a whole number from {min} to {max}"),
            )),
        }
    }
}

/// Values are typed by their key when read, so a key never holds another kind.
fn unreachable_kind() -> ! {
    unreachable!("values are checked against their key's kind when read")
}

impl RawSystem {
    /// Applies defaults and derived values, then every validation rule.
    pub(crate) fn resolve(
        &self,
        system: &str,
        origin: &str,
    ) -> Result<SystemSettings, SettingsError> {
        let r = Reader {
            system,
            origin,
            raw: self,
        };
        let v = Read::from(&r)?;
        if v.cb_min_calls > v.cb_window_size {
            return Err(r.fail_order(
                Key::CbMinCalls,
                Key::CbWindowSize,
                format!("{} is more than `cb_window_size` = {}: the window could never hold enough calls to open (need 1 ≤ cb_min_calls ≤ cb_window_size)", v.cb_min_calls, v.cb_window_size),
            ));
        }
        let (connect, read, total) = (v.connect_timeout, v.read_timeout, v.total_timeout);
        if connect >= read {
            return Err(r.fail_order(
                Key::ConnectTimeout,
                Key::ReadTimeout,
                format!("{connect} s is not less than `read_timeout` = {read} s (need connect_timeout < read_timeout < total_timeout)"),
            ));
        }
        if read >= total {
            return Err(r.fail_order(
                Key::ReadTimeout,
                Key::TotalTimeout,
                format!("{read} s is not less than `total_timeout` = {total} s (need connect_timeout < read_timeout < total_timeout)"),
            ));
        }
        let slow = v.cb_slow_threshold;
        if slow >= total {
            return Err(r.fail_order(
                Key::CbSlowThreshold,
                Key::TotalTimeout,
                format!("{slow} s is not less than `total_timeout` = {total} s: a slow call must be caught before the timeout (need 0 < cb_slow_threshold < total_timeout; the guide uses read_timeout / 2)"),
            ));
        }
        Ok(v.into_settings(system))
    }
}
