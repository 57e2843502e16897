//! The settings schema of [`resilience`](https://docs.rs/resilience): one table per
//! external system in `resilience.toml`, the guide's defaults, the derived values, the
//! validation rules and the environment overrides.
//!
//! The same rule set runs twice: at compile time inside `#[circuit_breaker]`, which
//! checks the annotated system's entry, and at startup, after environment variables such
//! as `CLIENT_SBER__CB_FAILURE_RATE=0.5` have been applied.
//!
//! ```
//! use resilience_settings::Settings;
//!
//! let toml = r#"
//!     [systems.sber]
//!     base_url = "http://127.0.0.1:8081"
//!     cb_failure_rate = 0.30
//!
//!     [systems.customer]
//! "#;
//! let env = [("CLIENT_SBER__CB_OPEN_DURATION", "5")];
//! let settings = Settings::load_with_env(toml, "resilience.toml", env).unwrap();
//! let sber = settings.system("sber").unwrap();
//! assert_eq!(sber.cb_failure_rate(), 0.30);
//! assert_eq!(sber.cb_open_duration().as_secs(), 5);
//! assert_eq!(sber.cb_slow_threshold().as_secs(), 15); // read_timeout / 2
//! assert_eq!(settings.system("customer").unwrap().cb_failure_rate(), 0.5);
//! ```
#![deny(missing_docs)]

mod env;
mod error;
mod keys;
mod raw;
mod system;

use std::collections::BTreeMap;

pub use error::{ErrorKind, SettingsError};
pub use keys::{env_var, quoted_list, Key, KEYS};
pub use system::{suggest, Defaults, SystemSettings, DEFAULTS};

/// The settings file's name, looked up next to the service crate's `Cargo.toml`.
pub const FILE_NAME: &str = "resilience.toml";

/// The prefix of every environment override: `CLIENT_<SYSTEM>__<KEY>`.
pub const ENV_PREFIX: &str = "CLIENT_";

/// The system name the guide forbids (R-RES-CB-X3): one breaker per system, never a
/// shared `default`.
pub const FORBIDDEN_SYSTEM: &str = "default";

/// Every system of one service, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    origin: String,
    systems: BTreeMap<String, SystemSettings>,
}

impl Settings {
    /// Parses and validates a settings file without looking at the environment.
    ///
    /// `origin` names the file in error messages (`resilience.toml`, or a full path).
    pub fn parse(text: &str, origin: &str) -> Result<Self, SettingsError> {
        Self::load_with_env(text, origin, std::iter::empty::<(String, String)>())
    }

    /// Parses a settings file, applies the process environment's `CLIENT_…__…`
    /// overrides, and validates the result.
    ///
    /// An override naming an unknown system or key, or carrying a malformed value, is an
    /// error naming the variable: nothing is silently ignored.
    pub fn load(text: &str, origin: &str) -> Result<Self, SettingsError> {
        let vars = env::process_vars()?;
        Self::load_with_env(text, origin, vars)
    }

    /// Like [`Settings::load`], with the environment given as name/value pairs (for tests,
    /// and for services that read their environment elsewhere). Pairs whose name does not
    /// start with [`ENV_PREFIX`] are ignored.
    pub fn load_with_env<I, K, V>(text: &str, origin: &str, vars: I) -> Result<Self, SettingsError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut file = raw::RawFile::parse(text, origin)?;
        env::apply(&mut file, origin, vars)?;
        let systems = file
            .systems
            .into_iter()
            .map(|(name, raw)| {
                let resolved = raw.resolve(&name, origin)?;
                Ok((name, resolved))
            })
            .collect::<Result<_, SettingsError>>()?;
        Ok(Settings {
            origin: origin.to_owned(),
            systems,
        })
    }

    /// The file these settings came from, as given to the loader.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// One system's settings, if the file has an entry for it.
    pub fn system(&self, name: &str) -> Option<&SystemSettings> {
        self.systems.get(name)
    }

    /// Every system, in name order.
    pub fn systems(&self) -> impl ExactSizeIterator<Item = &SystemSettings> {
        self.systems.values()
    }

    /// Every system's name, in order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.systems.keys().map(String::as_str)
    }
}
