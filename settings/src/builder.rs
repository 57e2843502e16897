//! Settings built by code, through the same validation as the file: the builder, and
//! its setters expanded from the table of keys.

use std::time::Duration;

use crate::error::SettingsError;
use crate::keys::{for_each_key, Key};
use crate::mode::CbMode;
use crate::raw::{check_system_name, Entry, RawSystem, Source, Value};
use crate::system::SystemSettings;

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
#[must_use = "a builder does nothing until `build` is called"]
pub struct SystemSettingsBuilder {
    name: String,
    raw: RawSystem,
}

impl SystemSettingsBuilder {
    pub(crate) fn new(name: &str) -> Self {
        SystemSettingsBuilder {
            name: name.to_owned(),
            raw: RawSystem::default(),
        }
    }

    /// Sets `key` as if its table said so. The setters, one per key, are expanded from
    /// the table of keys below.
    fn set(mut self, key: Key, value: Value) -> Self {
        self.raw.entries.insert(
            key,
            Entry {
                value,
                source: Source::Table,
            },
        );
        self
    }

    /// The same settings for a system of another name: a template shared by code.
    pub fn named(&self, name: &str) -> Self {
        SystemSettingsBuilder {
            name: name.to_owned(),
            raw: self.raw.clone(),
        }
    }

    /// Applies the guide's defaults and derived values, and every validation rule.
    ///
    /// # Errors
    ///
    /// When the name is not allowed or a value breaks a rule, as in a file.
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

/// The type a setter takes for each kind of key, and the [`Value`] it sets.
macro_rules! set {
    (Url) => { impl Into<String> };
    (Seconds) => { Duration };
    (Count) => { u32 };
    (Rate) => { f64 };
    (Factor) => { f64 };
    (Mode) => { CbMode };
    (Bulkhead) => { &str };

    (Url, $v:expr) => {
        Value::Text($v.into())
    };
    (Seconds, $v:expr) => {
        Value::Seconds {
            value: $v.as_secs_f64(),
            unit: true,
        }
    };
    (Count, $v:expr) => {
        Value::Integer($v.into())
    };
    (Rate, $v:expr) => {
        Value::Number($v)
    };
    (Factor, $v:expr) => {
        Value::Number($v)
    };
    (Mode, $v:expr) => {
        Value::Text(CbMode::as_str($v).to_owned())
    };
    (Bulkhead, $v:expr) => {
        Value::Text($v.to_owned())
    };
}

/// One setter per key.
macro_rules! setters {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:ident: $kind:ident { $($param:tt)* }
    )*) => {
        impl SystemSettingsBuilder {$(
            #[doc = concat!("Sets `", stringify!($name), "`: see [`SystemSettings::", stringify!($name), "`].")]
            pub fn $name(self, value: set!($kind)) -> Self {
                self.set(Key::$variant, set!($kind, value))
            }
        )*}
    };
}

for_each_key!(setters);
