//! The keys of a system's table and their environment variable names.

use std::fmt;

/// One key of a `[systems.NAME]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `base_url`: where the system lives (`http://…` or `https://…`).
    BaseUrl,
    /// `connect_timeout`, a duration: applied by the HTTP client.
    ConnectTimeout,
    /// `read_timeout`, a duration: applied by the HTTP client.
    ReadTimeout,
    /// `total_timeout`, a duration: the bound on the whole call, enforced by the guard.
    TotalTimeout,
    /// `cb_window_size`: how many recent outcomes the breaker looks at.
    CbWindowSize,
    /// `cb_min_calls`: outcomes needed in the window before it may open.
    CbMinCalls,
    /// `cb_failure_rate`: share of failures that opens it, in (0, 1].
    CbFailureRate,
    /// `cb_open_duration`, a duration.
    CbOpenDuration,
    /// `cb_half_open_calls`: trial calls admitted while half-open.
    CbHalfOpenCalls,
    /// `cb_slow_threshold`, a duration: a call longer than this is slow.
    CbSlowThreshold,
    /// `max_connections`: the connection limit; the guard's bulkhead admits 80% of it.
    MaxConnections,
    /// `max_keepalive`: idle keep-alive connections the HTTP client keeps.
    MaxKeepalive,
    /// `bulkhead_wait`, a duration: the longest a call waits for a bulkhead permit.
    BulkheadWait,
}

/// Every key, in the order the guide lists them.
pub const KEYS: [Key; 13] = [
    Key::BaseUrl,
    Key::ConnectTimeout,
    Key::ReadTimeout,
    Key::TotalTimeout,
    Key::CbWindowSize,
    Key::CbMinCalls,
    Key::CbFailureRate,
    Key::CbOpenDuration,
    Key::CbHalfOpenCalls,
    Key::CbSlowThreshold,
    Key::MaxConnections,
    Key::MaxKeepalive,
    Key::BulkheadWait,
];

/// What kind of value a key holds, which decides how an environment value is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Url,
    Seconds,
    Count,
    Rate,
}

impl Key {
    /// The key as written in `resilience.toml`.
    pub const fn name(self) -> &'static str {
        match self {
            Key::BaseUrl => "base_url",
            Key::ConnectTimeout => "connect_timeout",
            Key::ReadTimeout => "read_timeout",
            Key::TotalTimeout => "total_timeout",
            Key::CbWindowSize => "cb_window_size",
            Key::CbMinCalls => "cb_min_calls",
            Key::CbFailureRate => "cb_failure_rate",
            Key::CbOpenDuration => "cb_open_duration",
            Key::CbHalfOpenCalls => "cb_half_open_calls",
            Key::CbSlowThreshold => "cb_slow_threshold",
            Key::MaxConnections => "max_connections",
            Key::MaxKeepalive => "max_keepalive",
            Key::BulkheadWait => "bulkhead_wait",
        }
    }

    /// Looks a key up by its name in the file.
    pub fn from_name(name: &str) -> Option<Key> {
        KEYS.into_iter().find(|key| key.name() == name)
    }

    pub(crate) const fn kind(self) -> Kind {
        match self {
            Key::BaseUrl => Kind::Url,
            Key::CbWindowSize
            | Key::CbMinCalls
            | Key::CbHalfOpenCalls
            | Key::MaxConnections
            | Key::MaxKeepalive => Kind::Count,
            Key::CbFailureRate => Kind::Rate,
            Key::ConnectTimeout
            | Key::ReadTimeout
            | Key::TotalTimeout
            | Key::CbOpenDuration
            | Key::CbSlowThreshold
            | Key::BulkheadWait => Kind::Seconds,
        }
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
    quoted_list(KEYS.iter().map(|k| k.name()))
}

/// Names for an error message: `` `customer`, `sber` ``, or `none`.
pub fn quoted_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|n| format!("`{n}`")).collect();
    if quoted.is_empty() {
        "none".to_owned()
    } else {
        quoted.join(", ")
    }
}
