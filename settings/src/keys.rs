//! The keys of a system's table: one declarative table from which the key list, each
//! key's kind, default and bounds, the [`SystemSettings`] fields and getters, the
//! builder's setters, the reads and the serialised form are all generated.

use std::fmt;
use std::time::Duration;

use crate::error::SettingsError;
use crate::raw::Value;
use crate::system::Reader;
use crate::{CbMode, SystemSettingsBuilder};

/// Upper bound of `cb_window_size` and `cb_min_calls` (keeps the window's ring small).
const MAX_WINDOW: i64 = 10_000;
/// Upper bound of `cb_half_open_calls`.
const MAX_HALF_OPEN: i64 = 1_000;
/// Upper bound of `max_connections`.
const MAX_CONNECTIONS: i64 = 100_000;
/// `max_keepalive`'s bound: its default, `max_connections × 1.2`, must fit under it.
const MAX_KEEPALIVE: i64 = MAX_CONNECTIONS * 6 / 5;

/// `max_connections × 1.2`, rounded up so that a small pool still keeps one spare.
fn keepalive_for(max_connections: u32) -> i64 {
    (i64::from(max_connections) * 6 + 4) / 5
}

/// What kind of value a key holds, which decides how a value is parsed and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Url,
    Seconds,
    Count,
    Rate,
    Mode,
}

/// Per-kind pieces of the table's expansion: the type a value is read as (`read`), kept
/// as (`field`), returned as (`get`), and set from in code (`set`).
macro_rules! kind {
    (read Url) => { Option<String> };
    (read Seconds) => { f64 };
    (read Count) => { u32 };
    (read Rate) => { f64 };
    (read Mode) => { CbMode };

    (field Url) => { Option<String> };
    (field Seconds) => { Duration };
    (field Count) => { u32 };
    (field Rate) => { f64 };
    (field Mode) => { CbMode };

    (get Url) => { Option<&str> };
    (get Seconds) => { Duration };
    (get Count) => { u32 };
    (get Rate) => { f64 };
    (get Mode) => { CbMode };

    (set Url) => { impl Into<String> };
    (set Seconds) => { Duration };
    (set Count) => { u32 };
    (set Rate) => { f64 };
    (set Mode) => { CbMode };
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
    ($r:ident, $key:expr, Mode {}) => {
        $r.mode($key)
    };
}

/// Converts between the kinds' representations: a read value into its field (`field`),
/// a field into its getter's value (`get`), and a setter's argument into a [`Value`]
/// (`set`).
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
    (get $kind:ident, $v:expr) => {
        $v
    };

    (set Url, $v:expr) => {
        Value::Text($v.into())
    };
    (set Seconds, $v:expr) => {
        Value::Seconds {
            value: $v.as_secs_f64(),
            unit: true,
        }
    };
    (set Count, $v:expr) => {
        Value::Integer($v.into())
    };
    (set Rate, $v:expr) => {
        Value::Number($v)
    };
    (set Mode, $v:expr) => {
        Value::Text(CbMode::as_str($v).to_owned())
    };

    (debug Url, $v:expr) => {
        &$v.as_deref().map(crate::mask_url)
    };
    (debug $kind:ident, $v:expr) => {
        &$v
    };
}

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

/// The table's expansion; see the invocation below for the table itself.
macro_rules! keys {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:ident: $kind:ident { $($param:tt)* }
    )*) => {
        /// One key of a `[systems.NAME]` table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Key {$(
            #[doc = concat!("`", stringify!($name), "`: ")]
            $(#[doc = $doc])*
            $variant,
        )*}

        /// Every key, in the order the guide lists them.
        pub const KEYS: [Key; [$(stringify!($name)),*].len()] = [$(Key::$variant),*];

        impl Key {
            /// The key as written in `resilience.toml`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Key::$variant => stringify!($name),)*
                }
            }

            /// What kind of value the key holds.
            pub(crate) const fn kind(self) -> Kind {
                match self {
                    $(Key::$variant => Kind::$kind,)*
                }
            }
        }

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
        pub(crate) struct Read {
            $(pub(crate) $name: kind!(read $kind),)*
        }

        impl Read {
            /// Reads every key in the table's order: a default may use a key above it.
            pub(crate) fn from(r: &Reader<'_>) -> Result<Read, SettingsError> {
                $(let $name = read!(r, Key::$variant, $kind { $($param)* })?;)*
                Ok(Read { $($name),* })
            }

            /// The settings of the system named `name`.
            pub(crate) fn into_settings(self, name: &str) -> SystemSettings {
                SystemSettings {
                    name: name.to_owned(),
                    $($name: convert!(field $kind, self.$name),)*
                }
            }
        }

        impl SystemSettingsBuilder {$(
            #[doc = concat!("Sets `", stringify!($name), "`: see [`SystemSettings::", stringify!($name), "`].")]
            pub fn $name(self, value: kind!(set $kind)) -> Self {
                self.set(Key::$variant, convert!(set $kind, value))
            }
        )*}

        /// Writes every key of `system` into `map`, resolved.
        pub(crate) fn serialize_keys<M: serde::ser::SerializeMap>(
            map: &mut M,
            system: &SystemSettings,
        ) -> Result<(), M::Error> {
            $(serialize!(map, stringify!($name), $kind, system.$name());)*
            Ok(())
        }
    };
}

keys! {
    /// Where the system lives (`http://…` or `https://…`), if the file says.
    BaseUrl base_url: Url {}
    /// TCP connect timeout, 2 s by default. Enforced by the HTTP client built from
    /// these settings (`outbound_guard_reqwest::client_builder`, or by hand), not by the
    /// guard.
    ConnectTimeout connect_timeout: Seconds { default: 2.0 }
    /// Read timeout of one response, 30 s by default. Enforced by the HTTP client built
    /// from these settings, not by the guard. It is shorter than `total_timeout`, so a
    /// hung upstream ends here first: the caller sees the HTTP client's timeout error
    /// (reqwest's `is_timeout`), returned by the adapter as its port's error, and the
    /// outcome metric says `failure`, not `timeout`.
    ReadTimeout read_timeout: Seconds { default: 30.0 }
    /// The bound on the whole call, enforced by the guard: 35 s by default. It fires
    /// (`Cause::Timeout`, outcome `timeout`) only when the whole call outlasts it while
    /// each read stays under `read_timeout` (a trickling response, several requests in
    /// one call); a hung upstream behind a client built from these settings ends at
    /// `read_timeout` first, as a `failure`.
    TotalTimeout total_timeout: Seconds { default: 35.0 }
    /// How many recent outcomes the breaker's window holds: the last 50 by default.
    CbWindowSize cb_window_size: Count { default: 50, min: 1, max: MAX_WINDOW }
    /// How many outcomes the window needs before the breaker may open: 10 by default.
    CbMinCalls cb_min_calls: Count { default: 10, min: 1, max: MAX_WINDOW }
    /// The share of failures in the window that opens the breaker, in (0, 1]: 0.5 by
    /// default (critical systems state 0.30).
    CbFailureRate cb_failure_rate: Rate { default: 0.5 }
    /// How long the breaker stays open before half-open trials: 30 s by default.
    CbOpenDuration cb_open_duration: Seconds { default: 30.0 }
    /// How many trial calls half-open admits: 3 by default.
    CbHalfOpenCalls cb_half_open_calls: Count { default: 3, min: 1, max: MAX_HALF_OPEN }
    /// A call that takes longer than this is slow, and counts as a failure:
    /// `read_timeout / 2` by default.
    CbSlowThreshold cb_slow_threshold: Seconds { default: read_timeout / 2.0 }
    /// The connection limit, 10 by default. The guard's bulkhead admits
    /// `max_connections × 0.8` calls at once
    /// ([`bulkhead_permits`](SystemSettings::bulkhead_permits)), which bounds the
    /// connections in use.
    MaxConnections max_connections: Count { default: 10, min: 1, max: MAX_CONNECTIONS }
    /// The HTTP client's idle keep-alive pool size (R-RES-ISO-2): `max_connections ×
    /// 1.2`, rounded up, by default. Enforced by the HTTP client built from these
    /// settings, not by the guard.
    MaxKeepalive max_keepalive: Count { default: keepalive_for(max_connections), min: 0, max: MAX_KEEPALIVE }
    /// The longest a call waits for a bulkhead permit before it is rejected:
    /// `connect_timeout` by default (the guide's pool timeout); 0 rejects at once.
    BulkheadWait bulkhead_wait: Seconds { default: connect_timeout, zero: allowed }
    /// The operator's switch, applied at startup and whenever a reload changes it:
    /// `"auto"` (the default; the breaker decides), `"forced_open"` (every call
    /// rejected) or `"disabled"` (every call admitted, nothing counted). Editing it in a
    /// mounted Kubernetes `ConfigMap` acts on every replica; back to `"auto"`, a breaker the file
    /// had set is reset to closed. See [`CbMode`].
    CbMode cb_mode: Mode {}
}

impl Key {
    /// Looks a key up by its name in the file.
    pub fn from_name(name: &str) -> Option<Key> {
        KEYS.into_iter().find(|key| key.name() == name)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment variable that overrides `key` of `system` under the default prefix:
/// `env_var("sber", Key::CbFailureRate)` is `CLIENT_SBER__CB_FAILURE_RATE`.
pub fn env_var(system: &str, key: Key) -> String {
    env_var_with_prefix(crate::ENV_PREFIX, system, key)
}

/// Like [`env_var`], under another prefix (see [`Loader::prefix`](crate::Loader::prefix)).
pub fn env_var_with_prefix(prefix: &str, system: &str, key: Key) -> String {
    format!(
        "{prefix}{}__{}",
        system.to_ascii_uppercase(),
        key.name().to_ascii_uppercase()
    )
}

/// The key `name` is, or a near miss of (at most two edits away, as a typo is):
/// the rule that decides whether an environment variable is ours.
pub(crate) fn key_or_near_miss(name: &str) -> Option<Key> {
    if let Some(key) = Key::from_name(name) {
        return Some(key);
    }
    KEYS.into_iter()
        .map(|key| (strsim::damerau_levenshtein(name, key.name()), key))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, key)| key)
}

pub(crate) fn key_list() -> String {
    crate::suggest::quoted_list(KEYS.iter().map(|k| k.name()))
}
