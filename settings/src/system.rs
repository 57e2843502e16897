//! One system's settings after defaults, derived values and validation.

use std::time::Duration;

use crate::error::{ErrorKind, SettingsError};
use crate::keys::Key;
use crate::raw::{Entry, RawSystem, Source, Value};

/// The guide's defaults (seconds for durations).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Defaults {
    /// `connect_timeout`: 2.0 s.
    pub connect_timeout: f64,
    /// `read_timeout`: 30.0 s.
    pub read_timeout: f64,
    /// `total_timeout`: 35.0 s.
    pub total_timeout: f64,
    /// `cb_window_size`: the last 50 calls.
    pub cb_window_size: u32,
    /// `cb_min_calls`: at least 10 calls before it may open.
    pub cb_min_calls: u32,
    /// `cb_failure_rate`: 50% (critical systems state 0.30).
    pub cb_failure_rate: f64,
    /// `cb_open_duration`: 30.0 s.
    pub cb_open_duration: f64,
    /// `cb_half_open_calls`: 3 trials.
    pub cb_half_open_calls: u32,
    /// `max_connections`: 10.
    pub max_connections: u32,
}

/// The guide's defaults. `cb_slow_threshold` defaults to `read_timeout / 2`,
/// `max_keepalive` to `max_connections × 1.2`, and `bulkhead_wait` to
/// `connect_timeout` (the guide's pool timeout).
pub const DEFAULTS: Defaults = Defaults {
    connect_timeout: 2.0,
    read_timeout: 30.0,
    total_timeout: 35.0,
    cb_window_size: 50,
    cb_min_calls: 10,
    cb_failure_rate: 0.5,
    cb_open_duration: 30.0,
    cb_half_open_calls: 3,
    max_connections: 10,
};

/// Upper bounds that keep values sane (and the window's ring small).
const MAX_SECONDS: f64 = 86_400.0;
const MAX_WINDOW: i64 = 10_000;
const MAX_HALF_OPEN: i64 = 1_000;
const MAX_CONNECTIONS: i64 = 100_000;
/// `max_keepalive`'s bound: its default, `max_connections × 1.2`, must fit under it.
const MAX_KEEPALIVE: i64 = MAX_CONNECTIONS * 6 / 5;
/// The smallest positive duration: one nanosecond, `Duration`'s resolution.
const MIN_SECONDS: f64 = 1e-9;
/// A duration written without a unit is seconds, as the guide writes them; one of this
/// many or more (over 16 minutes for a timeout) is surely milliseconds written without
/// their unit, so it must be written with one (`"35000ms"`, or `"20m"` if meant).
pub const UNITLESS_SECONDS_LIMIT: f64 = 1_000.0;

/// One external system's validated settings.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SystemSettings {
    /// The system's name, the table's key: `sber` for `[systems.sber]`.
    name: String,
    /// Where the system lives, if the file says.
    base_url: Option<String>,
    /// TCP connect timeout.
    connect_timeout: Duration,
    /// Read timeout of one response.
    read_timeout: Duration,
    /// The bound on the whole call, enforced by the guard.
    total_timeout: Duration,
    /// How many recent outcomes the breaker's window holds.
    cb_window_size: u32,
    /// How many outcomes the window needs before the breaker may open.
    cb_min_calls: u32,
    /// The share of failures in the window that opens the breaker.
    cb_failure_rate: f64,
    /// How long the breaker stays open before half-open trials.
    cb_open_duration: Duration,
    /// How many trial calls half-open admits.
    cb_half_open_calls: u32,
    /// A call that takes longer than this is slow, and counts as a failure.
    cb_slow_threshold: Duration,
    /// The HTTP client's connection limit.
    max_connections: u32,
    /// The HTTP client's idle keep-alive pool size.
    max_keepalive: u32,
    /// The longest a call waits for a bulkhead permit before it is rejected.
    bulkhead_wait: Duration,
}

impl SystemSettings {
    /// The system's name, the table's key: `sber` for `[systems.sber]`.
    #[inline]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the system lives, if the file says.
    #[inline]
    pub fn base_url(&self) -> Option<&str> {
        self.base_url.as_deref()
    }

    /// TCP connect timeout. Enforced by the HTTP client built from these settings
    /// (`outbound_guard::http::client_builder`, or by hand), not by the guard.
    #[inline]
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// Read timeout of one response. Enforced by the HTTP client built from these
    /// settings, not by the guard.
    #[inline]
    pub fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// The bound on the whole call, enforced by the guard.
    #[inline]
    pub fn total_timeout(&self) -> Duration {
        self.total_timeout
    }

    /// How many recent outcomes the breaker's window holds.
    #[inline]
    pub fn cb_window_size(&self) -> u32 {
        self.cb_window_size
    }

    /// How many outcomes the window needs before the breaker may open.
    #[inline]
    pub fn cb_min_calls(&self) -> u32 {
        self.cb_min_calls
    }

    /// The share of failures in the window that opens the breaker.
    #[inline]
    pub fn cb_failure_rate(&self) -> f64 {
        self.cb_failure_rate
    }

    /// How long the breaker stays open before half-open trials.
    #[inline]
    pub fn cb_open_duration(&self) -> Duration {
        self.cb_open_duration
    }

    /// How many trial calls half-open admits.
    #[inline]
    pub fn cb_half_open_calls(&self) -> u32 {
        self.cb_half_open_calls
    }

    /// A call that takes longer than this is slow, and counts as a failure.
    #[inline]
    pub fn cb_slow_threshold(&self) -> Duration {
        self.cb_slow_threshold
    }

    /// The connection limit. The guard's bulkhead admits `max_connections × 0.8` calls
    /// at once ([`bulkhead_permits`](SystemSettings::bulkhead_permits)), which bounds
    /// the connections in use.
    #[inline]
    pub fn max_connections(&self) -> u32 {
        self.max_connections
    }

    /// The HTTP client's idle keep-alive pool size (R-RES-ISO-2). Enforced by the HTTP
    /// client built from these settings, not by the guard.
    #[inline]
    pub fn max_keepalive(&self) -> u32 {
        self.max_keepalive
    }

    /// The longest a call waits for a bulkhead permit before it is rejected.
    #[inline]
    pub fn bulkhead_wait(&self) -> Duration {
        self.bulkhead_wait
    }

    /// The bulkhead's permits: `max_connections × 0.8`, at least 1 (R-RES-BH-3).
    pub fn bulkhead_permits(&self) -> usize {
        ((self.max_connections as usize * 4) / 5).max(1)
    }

    /// The environment variable that overrides `key` of this system.
    pub fn env_var(&self, key: Key) -> String {
        crate::env_var(&self.name, key)
    }
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
            .key(key.name())
            .variable(self.variable(key))
    }

    /// An ordering rule between `key` and `other` is broken: reported on `key`, naming
    /// the environment variable that set either of them (the override is what broke a
    /// file that was valid, whichever side it changed).
    fn fail_order(&self, key: Key, other: Key, message: String) -> SettingsError {
        let variable = self.variable(key).or_else(|| self.variable(other));
        SettingsError::new(ErrorKind::Order, self.origin, message)
            .system(self.system)
            .key(key.name())
            .variable(variable)
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

    fn count(&self, key: Key, default: i64, min: i64, max: i64) -> Result<u32, SettingsError> {
        let value = match self.entry(key).map(|e| &e.value) {
            None => default,
            Some(Value::Integer(i)) => *i,
            Some(_) => unreachable_kind(),
        };
        if (min..=max).contains(&value) {
            Ok(value as u32)
        } else {
            Err(self.fail(
                ErrorKind::OutOfRange,
                key,
                format!("got {value}, expected a whole number from {min} to {max}"),
            ))
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
        let d = DEFAULTS;

        let base_url = match r.entry(Key::BaseUrl).map(|e| &e.value) {
            None => None,
            Some(Value::Text(url)) => {
                let ok = (url.starts_with("http://") || url.starts_with("https://"))
                    && url.len() > "https://".len()
                    && !url.contains(char::is_whitespace);
                if !ok {
                    return Err(r.fail(
                        ErrorKind::Malformed,
                        Key::BaseUrl,
                        format!("got {url:?}, expected an absolute http:// or https:// URL"),
                    ));
                }
                Some(url.clone())
            }
            Some(_) => unreachable_kind(),
        };

        let connect = r.seconds(Key::ConnectTimeout, d.connect_timeout, false)?;
        let read = r.seconds(Key::ReadTimeout, d.read_timeout, false)?;
        let total = r.seconds(Key::TotalTimeout, d.total_timeout, false)?;
        let slow = r.seconds(Key::CbSlowThreshold, read / 2.0, false)?;
        let open = r.seconds(Key::CbOpenDuration, d.cb_open_duration, false)?;
        let bulkhead_wait = r.seconds(Key::BulkheadWait, connect, true)?;

        let window = r.count(Key::CbWindowSize, d.cb_window_size.into(), 1, MAX_WINDOW)?;
        let min_calls = r.count(Key::CbMinCalls, d.cb_min_calls.into(), 1, MAX_WINDOW)?;
        let half_open = r.count(
            Key::CbHalfOpenCalls,
            d.cb_half_open_calls.into(),
            1,
            MAX_HALF_OPEN,
        )?;
        let max_connections = r.count(
            Key::MaxConnections,
            d.max_connections.into(),
            1,
            MAX_CONNECTIONS,
        )?;
        // max_connections × 1.2, rounded up so that a small pool still keeps one spare.
        let keepalive_default = (u64::from(max_connections) * 6).div_ceil(5) as i64;
        let max_keepalive = r.count(Key::MaxKeepalive, keepalive_default, 0, MAX_KEEPALIVE)?;

        let rate = match r.entry(Key::CbFailureRate).map(|e| &e.value) {
            None => d.cb_failure_rate,
            Some(Value::Number(n)) => *n,
            Some(_) => unreachable_kind(),
        };
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(r.fail(
                ErrorKind::OutOfRange,
                Key::CbFailureRate,
                format!("got {rate}, expected a share greater than 0 and at most 1 (0.5 by default, 0.30 for critical systems)"),
            ));
        }

        if min_calls > window {
            return Err(r.fail_order(
                Key::CbMinCalls,
                Key::CbWindowSize,
                format!("{min_calls} is more than `cb_window_size` = {window}: the window could never hold enough calls to open (need 1 ≤ cb_min_calls ≤ cb_window_size)"),
            ));
        }
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
        if slow >= total {
            return Err(r.fail_order(
                Key::CbSlowThreshold,
                Key::TotalTimeout,
                format!("{slow} s is not less than `total_timeout` = {total} s: a slow call must be caught before the timeout (need 0 < cb_slow_threshold < total_timeout; the guide uses read_timeout / 2)"),
            ));
        }

        Ok(SystemSettings {
            name: system.to_owned(),
            base_url,
            connect_timeout: Duration::from_secs_f64(connect),
            read_timeout: Duration::from_secs_f64(read),
            total_timeout: Duration::from_secs_f64(total),
            cb_window_size: window,
            cb_min_calls: min_calls,
            cb_failure_rate: rate,
            cb_open_duration: Duration::from_secs_f64(open),
            cb_half_open_calls: half_open,
            cb_slow_threshold: Duration::from_secs_f64(slow),
            max_connections,
            max_keepalive,
            bulkhead_wait: Duration::from_secs_f64(bulkhead_wait),
        })
    }
}

/// The closest candidate to `name`, if one is close enough to be a likely typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
