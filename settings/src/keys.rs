//! The keys of a system's table, defined once in [`for_each_key!`]: the table of every
//! key with its kind, default and bounds. Each concern expands the table where it lives:
//! the [`Key`] enum and the key list here, the [`SystemSettings`](crate::SystemSettings)
//! fields, getters and reads with the system's settings, the builder's setters with the
//! builder, the serialised form with serde's impls.

use std::fmt;

use crate::suggest::quoted_list;

/// The default prefix of every environment override: `CLIENT_<SYSTEM>__<KEY>`.
///
/// A variable `CLIENT_<SYSTEM>__<KEY>` is ours when `<KEY>` is one of our keys or a near
/// miss of one (then `<SYSTEM>` must exist); every other variable under the prefix
/// belongs to the application and is left alone.
pub const ENV_PREFIX: &str = "CLIENT_";

/// Upper bound of `cb_window_size` and `cb_min_calls` (keeps the window's ring small).
pub(crate) const MAX_WINDOW: i64 = 10_000;
/// Upper bound of `cb_half_open_calls`.
pub(crate) const MAX_HALF_OPEN: i64 = 1_000;
/// Upper bound of `max_connections`.
pub(crate) const MAX_CONNECTIONS: i64 = 100_000;
/// `max_keepalive`'s bound: its default, `max_connections × 1.2`, must fit under it.
pub(crate) const MAX_KEEPALIVE: i64 = MAX_CONNECTIONS * 6 / 5;

/// `max_connections × 1.2`, rounded up so that a small pool still keeps one spare.
pub(crate) fn keepalive_for(max_connections: u32) -> i64 {
    (i64::from(max_connections) * 6 + 4) / 5
}

/// What kind of value a key holds, which decides how a value is parsed and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Url,
    Seconds,
    Count,
    Rate,
    /// A plain number within bounds: a multiplier, a share that may be 0.
    Factor,
    Mode,
    /// `bulkhead`'s kind: `fixed` or `adaptive`.
    Bulkhead,
}

/// The table of keys, defined once: `for_each_key!(expand)` calls `expand! { … }` with
/// every key, in the order the guide lists them, as
///
/// ```text
/// /// docs…
/// Variant name: Kind { parameters }
/// ```
///
/// The parameters are what reading the key needs: its `default` (an expression that may
/// name a key above it, read before it), its bounds (`min`, `max`) for counts and
/// factors (a factor's `max` may be `below: x`, excluding `x`), and `zero: allowed` for a
/// duration that may be 0.
macro_rules! for_each_key {
    ($expand:ident) => {
        $expand! {
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
            CbWindowSize cb_window_size: Count { default: 50, min: 1, max: $crate::keys::MAX_WINDOW }
            /// How many outcomes the window needs before the breaker may open: 10 by default.
            CbMinCalls cb_min_calls: Count { default: 10, min: 1, max: $crate::keys::MAX_WINDOW }
            /// The share of failures in the window that opens the breaker, in (0, 1]: 0.5 by
            /// default (critical systems state 0.30).
            CbFailureRate cb_failure_rate: Rate { default: 0.5 }
            /// How long the breaker stays open before half-open trials: 30 s by default.
            CbOpenDuration cb_open_duration: Seconds { default: 30.0 }
            /// The longest the breaker stays open: the cap of a backed-off open period and of an
            /// upstream's retry hint (`Retry-After`, `grpc-retry-pushback-ms`). 5 minutes by
            /// default (or `cb_open_duration`, if longer); at least `cb_open_duration`.
            CbOpenMax cb_open_max: Seconds { default: cb_open_duration.max(300.0) }
            /// Each re-opening after a failed trial multiplies the open period by this, up to
            /// `cb_open_max`; closing goes back to `cb_open_duration`. 1.0 (the guide's fixed
            /// 30 s) by default; from 1.0 to 100.
            CbOpenBackoff cb_open_backoff: Factor { default: 1.0, min: 1.0, max: 100.0 }
            /// A random share, up to this, added to every open period so that replicas opened
            /// by the same outage do not send their trials in the same instant: 0 (none) by
            /// default; at least 0, below 1 (`0.1` adds up to 10%).
            CbOpenJitter cb_open_jitter: Factor { default: 0.0, min: 0.0, below: 1.0 }
            /// How many trial calls half-open admits: 3 by default.
            CbHalfOpenCalls cb_half_open_calls: Count { default: 3, min: 1, max: $crate::keys::MAX_HALF_OPEN }
            /// A call that takes longer than this is slow, and counts as a failure:
            /// `read_timeout / 2` by default.
            CbSlowThreshold cb_slow_threshold: Seconds { default: read_timeout / 2.0 }
            /// The connection limit, 10 by default. The guard's bulkhead admits
            /// `max_connections × 0.8` calls at once
            /// ([`bulkhead_permits`](crate::SystemSettings::bulkhead_permits)), which bounds the
            /// connections in use.
            MaxConnections max_connections: Count { default: 10, min: 1, max: $crate::keys::MAX_CONNECTIONS }
            /// The HTTP client's idle keep-alive pool size (R-RES-ISO-2): `max_connections ×
            /// 1.2`, rounded up, by default. Enforced by the HTTP client built from these
            /// settings, not by the guard.
            MaxKeepalive max_keepalive: Count { default: $crate::keys::keepalive_for(max_connections), min: 0, max: $crate::keys::MAX_KEEPALIVE }
            /// The longest a call waits for a bulkhead permit before it is rejected:
            /// `connect_timeout` by default (the guide's pool timeout); 0 rejects at once.
            BulkheadWait bulkhead_wait: Seconds { default: connect_timeout, zero: allowed }
            /// The bulkhead's kind: `"fixed"` (the default, the guide's: always
            /// `max_connections × 0.8` permits) or `"adaptive"` (that many at most, and fewer,
            /// down to `bulkhead_floor`, while the upstream's latency against its baseline
            /// says calls queue there; see the adaptive bulkhead's guide). Read as
            /// `"fixed"` or `"adaptive"`; [`bulkhead_adaptive`](crate::SystemSettings::bulkhead_adaptive)
            /// says which.
            Bulkhead bulkhead: Bulkhead {}
            /// The fewest permits an adaptive bulkhead keeps: 1 by default; at most the
            /// bulkhead's permits (`max_connections × 0.8`), checked whatever `bulkhead` says.
            BulkheadFloor bulkhead_floor: Count { default: 1, min: 1, max: $crate::keys::MAX_CONNECTIONS }
            /// The operator's switch, applied at startup and whenever a reload changes it:
            /// `"auto"` (the default; the breaker decides), `"forced_open"` (every call
            /// rejected), `"disabled"` (every call admitted, nothing counted) or `"observe"`
            /// (every call admitted; the breaker counts and moves as in `"auto"` but refuses
            /// nothing, and says what it would have done). Editing it in a
            /// mounted Kubernetes `ConfigMap` acts on every replica; back to `"auto"`, a breaker the file
            /// had set is reset to closed. See [`CbMode`](crate::CbMode).
            CbMode cb_mode: Mode {}
        }
    };
}
pub(crate) use for_each_key;

/// The [`Key`] enum, [`KEYS`] and each key's name and kind.
macro_rules! key_enum {
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
    };
}

for_each_key!(key_enum);

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
    env_var_with_prefix(ENV_PREFIX, system, key)
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
    quoted_list(KEYS.iter().map(|k| k.name()))
}
