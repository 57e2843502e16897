//! One system's settings after defaults, derived values and validation: the
//! [`SystemSettings`] fields and getters and the reads, expanded from the table of keys.

use std::fmt;
use std::time::Duration;

use crate::error::{ErrorKind, SettingsError};
use crate::keys::{env_var, for_each_key, Key, Kind};
use crate::mode::CbMode;
use crate::raw::{expected, Entry, RawSystem, Source, Value};
use crate::secret::mask_url;
use crate::span::Location;

/// The longest duration a key takes: a day.
const MAX_SECONDS: f64 = 86_400.0;
/// The smallest positive duration: one nanosecond, `Duration`'s resolution.
const MIN_SECONDS: f64 = 1e-9;
/// A duration written without a unit is seconds, as the guide writes them; one of this
/// many or more (over 16 minutes for a timeout) is surely milliseconds written without
/// their unit, so it must be written with one (`"35000ms"`, or `"20m"` if meant).
pub const UNITLESS_SECONDS_LIMIT: f64 = 1_000.0;

/// Per-kind pieces of the table's expansion: the type a value is read as (`read`), kept
/// as (`field`) and returned as (`get`).
macro_rules! kind {
    (read Url) => { Option<String> };
    (read Seconds) => { f64 };
    (read Count) => { u32 };
    (read Rate) => { f64 };
    (read Factor) => { f64 };
    (read Mode) => { CbMode };
    (read Bulkhead) => { bool };

    (field Url) => { Option<String> };
    (field Seconds) => { Duration };
    (field Count) => { u32 };
    (field Rate) => { f64 };
    (field Factor) => { f64 };
    (field Mode) => { CbMode };
    (field Bulkhead) => { bool };

    (get Url) => { Option<&str> };
    (get Seconds) => { Duration };
    (get Count) => { u32 };
    (get Rate) => { f64 };
    (get Factor) => { f64 };
    (get Mode) => { CbMode };
    (get Bulkhead) => { &'static str };
}

/// Reads one key with its default and bounds, as the table states them.
macro_rules! read {
    ($r:ident, $key:expr, Url {}) => {
        $r.url($key)
    };
    ($r:ident, $key:expr, Seconds { default: $default:expr }) => {
        $r.seconds($key, $default, false)
    };
    ($r:ident, $key:expr, Seconds { default: $default:expr, zero: allowed }) => {
        $r.seconds($key, $default, true)
    };
    ($r:ident, $key:expr, Count { default: $default:expr, min: $min:expr, max: $max:expr }) => {
        $r.count($key, $default, $min, $max)
    };
    ($r:ident, $key:expr, Rate { default: $default:expr }) => {
        $r.rate($key, $default)
    };
    ($r:ident, $key:expr, Factor { default: $default:expr, min: $min:expr, max: $max:expr }) => {
        $r.factor($key, $default, $min, $max, true)
    };
    ($r:ident, $key:expr, Factor { default: $default:expr, min: $min:expr, below: $max:expr }) => {
        $r.factor($key, $default, $min, $max, false)
    };
    ($r:ident, $key:expr, Mode {}) => {
        $r.mode($key)
    };
    ($r:ident, $key:expr, Bulkhead {}) => {
        $r.adaptive($key)
    };
}

/// Converts between the kinds' representations: a read value into its field (`field`), a
/// field into its getter's value (`get`) and into what `Debug` shows (`debug`).
macro_rules! convert {
    (field Seconds, $v:expr) => {
        Duration::from_secs_f64($v)
    };
    (field $kind:ident, $v:expr) => {
        $v
    };

    (get Url, $v:expr) => {
        $v.as_deref()
    };
    (get Bulkhead, $v:expr) => {
        bulkhead_name($v)
    };
    (get $kind:ident, $v:expr) => {
        $v
    };

    (debug Url, $v:expr) => {
        &$v.as_deref().map(mask_url)
    };
    (debug Bulkhead, $v:expr) => {
        &bulkhead_name($v)
    };
    (debug $kind:ident, $v:expr) => {
        &$v
    };
}

/// [`SystemSettings`], its getters and `Debug`, and [`Read`], from the table of keys.
macro_rules! system_settings {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:ident: $kind:ident { $($param:tt)* }
    )*) => {
        /// One external system's validated settings.
        ///
        /// `Debug` masks the credentials a `base_url` may hold ([`mask_url`](crate::mask_url));
        /// [`base_url`](SystemSettings::base_url) returns the real value.
        #[derive(Clone, PartialEq)]
        #[non_exhaustive]
        pub struct SystemSettings {
            /// The system's name, the table's key: `sber` for `[systems.sber]`.
            name: String,
            $($name: kind!(field $kind),)*
        }

        impl SystemSettings {
            /// The system's name, the table's key: `sber` for `[systems.sber]`.
            #[inline]
            pub fn name(&self) -> &str {
                &self.name
            }

            $(
                $(#[doc = $doc])*
                #[inline]
                pub fn $name(&self) -> kind!(get $kind) {
                    convert!(get $kind, self.$name)
                }
            )*
        }

        impl fmt::Debug for SystemSettings {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("SystemSettings")
                    .field("name", &self.name)
                    $(.field(stringify!($name), convert!(debug $kind, self.$name)))*
                    .finish()
            }
        }

        /// Every key as read, with its default, before the rules between keys; durations
        /// in seconds.
        struct Read {
            $($name: kind!(read $kind),)*
        }

        impl Read {
            /// Reads every key in the table's order: a default may use a key above it.
            fn from(r: &Reader<'_>) -> Result<Read, SettingsError> {
                $(let $name = read!(r, Key::$variant, $kind { $($param)* })?;)*
                Ok(Read { $($name),* })
            }

            /// The settings of the system named `name`.
            fn into_settings(self, name: &str) -> SystemSettings {
                SystemSettings {
                    name: name.to_owned(),
                    $($name: convert!(field $kind, self.$name),)*
                }
            }
        }
    };
}

for_each_key!(system_settings);

impl SystemSettings {
    /// The bulkhead's permits: `max_connections × 0.8`, at least 1 (R-RES-BH-3).
    pub fn bulkhead_permits(&self) -> usize {
        ((self.max_connections() as usize * 4) / 5).max(1)
    }

    /// Whether `bulkhead` is `"adaptive"`: the bulkhead's permits are then its ceiling,
    /// and its limit moves between `bulkhead_floor` and them.
    pub fn bulkhead_adaptive(&self) -> bool {
        self.bulkhead
    }

    /// The environment variable that overrides `key` of this system.
    pub fn env_var(&self, key: Key) -> String {
        env_var(self.name(), key)
    }
}

/// `bulkhead`'s values as written: `fixed`, `adaptive`.
pub(crate) const BULKHEAD_KINDS: [&str; 2] = ["fixed", "adaptive"];

/// `bulkhead` as written, from whether it is adaptive.
fn bulkhead_name(adaptive: bool) -> &'static str {
    BULKHEAD_KINDS[usize::from(adaptive)]
}

/// Reads one key with its default, and reports problems against it.
struct Reader<'a> {
    system: &'a str,
    origin: &'a str,
    raw: &'a RawSystem,
}

impl Reader<'_> {
    fn entry(&self, key: Key) -> Option<&Entry> {
        self.raw.entries.get(&key)
    }

    /// Where the value of `key` is written in the file, unless a variable set it.
    fn location(&self, key: Key) -> Option<Location> {
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

    fn seconds(&self, key: Key, default: f64, allow_zero: bool) -> Result<f64, SettingsError> {
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

    fn url(&self, key: Key) -> Result<Option<String>, SettingsError> {
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
                            mask_url(url)
                        ),
                    ))
                }
            }
            Some(_) => unreachable_kind(),
        }
    }

    fn mode(&self, key: Key) -> Result<CbMode, SettingsError> {
        match self.entry(key).map(|e| &e.value) {
            None => Ok(CbMode::default()),
            Some(Value::Text(text)) => CbMode::from_name(text.trim()).ok_or_else(|| {
                self.fail(
                    ErrorKind::Malformed,
                    key,
                    format!("got {text:?}, expected {}", expected(Kind::Mode)),
                )
            }),
            Some(_) => unreachable_kind(),
        }
    }

    /// `bulkhead`: whether it is `adaptive` (`fixed` by default).
    fn adaptive(&self, key: Key) -> Result<bool, SettingsError> {
        match self.entry(key).map(|e| &e.value) {
            None => Ok(false),
            Some(Value::Text(text)) => match text.trim() {
                "fixed" => Ok(false),
                "adaptive" => Ok(true),
                _ => Err(self.fail(
                    ErrorKind::Malformed,
                    key,
                    format!("got {text:?}, expected {}", expected(Kind::Bulkhead)),
                )),
            },
            Some(_) => unreachable_kind(),
        }
    }

    fn rate(&self, key: Key, default: f64) -> Result<f64, SettingsError> {
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

    /// A number from `min` to `max` (`max` itself only if `inclusive`).
    fn factor(
        &self,
        key: Key,
        default: f64,
        min: f64,
        max: f64,
        inclusive: bool,
    ) -> Result<f64, SettingsError> {
        let value = match self.entry(key).map(|e| &e.value) {
            None => default,
            Some(Value::Number(n)) => *n,
            Some(_) => unreachable_kind(),
        };
        let high_ok = if inclusive { value <= max } else { value < max };
        if value.is_finite() && value >= min && high_ok {
            Ok(value)
        } else {
            let high = if inclusive { "at most" } else { "below" };
            Err(self.fail(
                ErrorKind::OutOfRange,
                key,
                format!("got {value}, expected a number of at least {min} and {high} {max} ({default} by default)"),
            ))
        }
    }

    fn count(&self, key: Key, default: i64, min: i64, max: i64) -> Result<u32, SettingsError> {
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
        if v.cb_open_max < v.cb_open_duration {
            return Err(r.fail_order(
                Key::CbOpenMax,
                Key::CbOpenDuration,
                format!("{} s is less than `cb_open_duration` = {} s: the longest open period cannot be shorter than the open period itself (need cb_open_duration ≤ cb_open_max)", v.cb_open_max, v.cb_open_duration),
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
        let ceiling = ((v.max_connections as usize * 4) / 5).max(1);
        if v.bulkhead_floor as usize > ceiling {
            return Err(r.fail_order(
                Key::BulkheadFloor,
                Key::MaxConnections,
                format!("{} is more than the bulkhead's {ceiling} permits (`max_connections` = {} × 0.8): an adaptive bulkhead's floor cannot be above its ceiling (need 1 ≤ bulkhead_floor ≤ max_connections × 0.8)", v.bulkhead_floor, v.max_connections),
            ));
        }
        Ok(v.into_settings(system))
    }
}
