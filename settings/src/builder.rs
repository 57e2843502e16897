//! Settings built by code, through the same validation as the file.

use std::time::Duration;

use crate::error::SettingsError;
use crate::keys::Key;
use crate::raw::{check_system_name, Entry, RawSystem, Source, Value};
use crate::SystemSettings;

/// The origin errors of settings built by code name.
pub(crate) const ORIGIN: &str = "settings built in code";

/// Builds one system's settings in code; [`build`](SystemSettingsBuilder::build) applies
/// the guide's defaults and every rule the file's tables go through.
///
/// ```
/// use std::time::Duration;
/// use outbound_guard_settings::{Settings, SystemSettings};
///
/// let sber = SystemSettings::builder("sber")
///     .base_url("http://127.0.0.1:8081")
///     .cb_failure_rate(0.30)
///     .read_timeout(Duration::from_secs(10))
///     .build()?;
/// assert_eq!(sber.cb_slow_threshold(), Duration::from_secs(5));
/// let settings = Settings::from_systems([sber])?;
/// assert_eq!(settings.names().collect::<Vec<_>>(), ["sber"]);
///
/// // The rules hold for code too.
/// let err = SystemSettings::builder("sber").cb_failure_rate(1.5).build().unwrap_err();
/// assert!(err.to_string().contains("at most 1"));
/// # Ok::<(), outbound_guard_settings::SettingsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SystemSettingsBuilder {
    name: String,
    raw: RawSystem,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $key:ident, $value:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            let value = $value(value);
            self.raw.entries.insert(Key::$key, Entry { value, source: Source::Table });
            self
        }
    )*};
}

fn seconds(value: Duration) -> Value {
    Value::Seconds {
        value: value.as_secs_f64(),
        unit: true,
    }
}

fn count(value: u32) -> Value {
    Value::Integer(value.into())
}

impl SystemSettingsBuilder {
    pub(crate) fn new(name: &str) -> Self {
        SystemSettingsBuilder {
            name: name.to_owned(),
            raw: RawSystem::default(),
        }
    }

    /// `base_url`: where the system lives (`http://…` or `https://…`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        let value = Value::Text(url.into());
        self.raw.entries.insert(
            Key::BaseUrl,
            Entry {
                value,
                source: Source::Table,
            },
        );
        self
    }

    setters! {
        /// `connect_timeout`.
        connect_timeout: Duration => ConnectTimeout, seconds;
        /// `read_timeout`.
        read_timeout: Duration => ReadTimeout, seconds;
        /// `total_timeout`.
        total_timeout: Duration => TotalTimeout, seconds;
        /// `cb_window_size`.
        cb_window_size: u32 => CbWindowSize, count;
        /// `cb_min_calls`.
        cb_min_calls: u32 => CbMinCalls, count;
        /// `cb_failure_rate`.
        cb_failure_rate: f64 => CbFailureRate, Value::Number;
        /// `cb_open_duration`.
        cb_open_duration: Duration => CbOpenDuration, seconds;
        /// `cb_half_open_calls`.
        cb_half_open_calls: u32 => CbHalfOpenCalls, count;
        /// `cb_slow_threshold`.
        cb_slow_threshold: Duration => CbSlowThreshold, seconds;
        /// `max_connections`.
        max_connections: u32 => MaxConnections, count;
        /// `max_keepalive`.
        max_keepalive: u32 => MaxKeepalive, count;
        /// `bulkhead_wait`.
        bulkhead_wait: Duration => BulkheadWait, seconds;
    }

    /// The same settings for a system of another name: a template shared by code.
    pub fn named(&self, name: &str) -> Self {
        SystemSettingsBuilder {
            name: name.to_owned(),
            raw: self.raw.clone(),
        }
    }

    /// Applies the guide's defaults and derived values, and every validation rule.
    pub fn build(self) -> Result<SystemSettings, SettingsError> {
        check_system_name(&self.name, ORIGIN)?;
        self.raw.resolve(&self.name, ORIGIN)
    }
}

impl SystemSettings {
    /// Builds a system's settings in code; see [`SystemSettingsBuilder`].
    pub fn builder(name: &str) -> SystemSettingsBuilder {
        SystemSettingsBuilder::new(name)
    }
}
