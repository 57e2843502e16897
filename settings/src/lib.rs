//! The settings schema of [`outbound-guard`](https://docs.rs/outbound-guard): one table per
//! external system in `resilience.toml`, the guide's defaults, the derived values, the
//! validation rules and the environment overrides.
//!
//! The same rule set runs twice: at compile time inside `#[circuit_breaker]`, which
//! checks the annotated system's entry, and at startup, after environment variables such
//! as `CLIENT_SBER__CB_FAILURE_RATE=0.5` have been applied.
//!
//! ```
//! use outbound_guard_settings::Settings;
//!
//! let toml = r#"
//!     [defaults]                 # a template copied into every system
//!     cb_open_duration = "10s"   # a duration with its unit; a bare number is seconds
//!
//!     [systems.sber]
//!     base_url = "http://127.0.0.1:8081"
//!     cb_failure_rate = 0.30
//!
//!     [systems.customer]
//! "#;
//! let env = [("CLIENT_SBER__CB_OPEN_DURATION", "5"), ("CLIENT_ID", "not ours")];
//! let settings = Settings::load_with_env(toml, "resilience.toml", env).unwrap();
//! let sber = settings.system("sber").unwrap();
//! assert_eq!(sber.cb_failure_rate(), 0.30);
//! assert_eq!(sber.cb_open_duration().as_secs(), 5);
//! assert_eq!(sber.cb_slow_threshold().as_secs(), 15); // read_timeout / 2
//! let customer = settings.system("customer").unwrap();
//! assert_eq!(customer.cb_failure_rate(), 0.5);
//! assert_eq!(customer.cb_open_duration().as_secs(), 10);
//! ```
//!
//! # Environment variables
//!
//! A variable `CLIENT_<SYSTEM>__<KEY>` is ours when `<KEY>` is one of our keys or a near
//! miss of one (then `<SYSTEM>` must exist, or startup stops with a did-you-mean); every
//! other variable under the prefix (`CLIENT_ID`, `CLIENT_STRIPE__API_KEY`) belongs to
//! the application and is left alone. The prefix is `CLIENT_` unless
//! [`Loader::prefix`] says otherwise.
//!
//! # Where the settings come from
//!
//! - compiled in: the file `#[circuit_breaker]` checked (`resilience.toml` next to the
//!   crate's `Cargo.toml`, unless `[package.metadata.outbound-guard] settings = "…"` names
//!   another; else the workspace root's), loaded with [`Settings::load`];
//! - mounted at run time: [`Settings::from_path`], or the compiled-in file unless
//!   [`PATH_VARIABLE`] names another ([`Loader::parse_or_mounted`]); either way checked
//!   to hold every system the binary was compiled against;
//! - built by code ([`SystemSettings::builder`], [`Settings::from_systems`]) or
//!   deserialised with serde (nested in a figment or config-rs configuration); both go
//!   through the same validation.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod build;
mod builder;
mod de;
mod env;
mod error;
#[doc(hidden)]
pub mod explain;
mod keys;
mod loader;
mod locate;
mod mode;
mod raw;
mod secret;
mod span;
mod suggest;
mod system;

use std::collections::BTreeMap;
use std::path::Path;

use suggest::quoted_list;

pub use builder::SystemSettingsBuilder;
pub use error::{ErrorKind, Location, SettingsError};
pub use keys::{env_var, env_var_with_prefix, Key, SystemSettings, KEYS};
pub use loader::Loader;
pub use mode::CbMode;
pub use secret::{mask_url, MASK};

#[doc(hidden)]
pub mod __private {
    //! Shared with the `outbound-guard` crates (the macros, the runtime and
    //! [`build`](crate::build)), not public API: may change in any release.
    pub use crate::locate::{
        candidate_files, crate_candidates, tried, workspace_root, Candidate, CandidateKind,
    };
    pub use crate::suggest::{did_you_mean, did_you_mean_as, quoted_list, suggest};
    pub use crate::system::UNITLESS_SECONDS_LIMIT;

    /// The variable [`build::track`](crate::build::track) sets for the crate's
    /// compilation: the absolute path of the settings file the build script tracks. The
    /// attribute leaves out its `include_bytes!` when it checks against that same file.
    pub const TRACKED_ENV: &str = "OUTBOUND_GUARD_TRACKED_SETTINGS";

    /// The system name the guide forbids (R-RES-CB-X3): one breaker per system, never a
    /// shared `default`.
    pub const FORBIDDEN_SYSTEM: &str = "default";
}

/// The settings file's name, looked up next to the service crate's `Cargo.toml`.
pub const FILE_NAME: &str = "resilience.toml";

/// The default prefix of every environment override: `CLIENT_<SYSTEM>__<KEY>`.
///
/// A variable `CLIENT_<SYSTEM>__<KEY>` is ours when `<KEY>` is one of our keys or a near
/// miss of one (then `<SYSTEM>` must exist); every other variable under the prefix
/// belongs to the application and is left alone.
pub const ENV_PREFIX: &str = "CLIENT_";

/// The environment variable that names a settings file mounted at run time (a
/// Kubernetes `ConfigMap`), read instead of the compiled-in one by [`Loader::parse_or_mounted`].
pub const PATH_VARIABLE: &str = "RESILIENCE_SETTINGS";

/// Every system of one service, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    origin: String,
    systems: BTreeMap<String, SystemSettings>,
}

impl Settings {
    /// Parses and validates a settings file without looking at the environment.
    ///
    /// `origin` names the file in error messages, as the user would write it
    /// (`resilience.toml`).
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] naming the file, system and key, when the text is not valid
    /// TOML, is not shaped as `[systems.NAME]` tables, or breaks a rule.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SettingsError> {
        Loader::new()
            .env(std::iter::empty::<(String, String)>())
            .parse(text, origin)
    }

    /// Parses a settings file, applies the process environment's `CLIENT_…__…`
    /// overrides, and validates the result.
    ///
    /// An override of ours naming an unknown system or key, or carrying a malformed
    /// value, is an error naming the variable: nothing of ours is silently ignored.
    ///
    /// # Errors
    ///
    /// As [`Settings::parse`], and an error naming the variable for a bad override of
    /// ours.
    pub fn load(text: &str, origin: &str) -> Result<Self, SettingsError> {
        Loader::new().parse(text, origin)
    }

    /// Like [`Settings::load`], with the environment given as name/value pairs (for tests,
    /// and for services that read their environment elsewhere). Pairs that are not ours
    /// by the ownership rule are ignored.
    ///
    /// # Errors
    ///
    /// As [`Settings::load`].
    pub fn load_with_env<I, K, V>(text: &str, origin: &str, vars: I) -> Result<Self, SettingsError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Loader::new().env(vars).parse(text, origin)
    }

    /// Reads the settings file at `path` (one mounted at run time), applies the process
    /// environment's overrides, validates it, and checks that it holds every system in
    /// `systems` (the ones the binary was compiled against). Errors name the file as
    /// `path` is written.
    ///
    /// # Errors
    ///
    /// As [`Settings::load`]; also when the file cannot be read
    /// ([`ErrorKind::Io`]) or lacks one of `systems` ([`ErrorKind::MissingSystem`]).
    ///
    /// ```no_run
    /// let settings = outbound_guard_settings::Settings::from_path(
    ///     "/etc/payments/resilience.toml",
    ///     &["sber", "customer"],
    /// )?;
    /// # Ok::<(), outbound_guard_settings::SettingsError>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>, systems: &[&str]) -> Result<Self, SettingsError> {
        Loader::new().require_systems(systems).read(path)
    }

    /// Settings of systems built by code ([`SystemSettings::builder`]), each already
    /// validated.
    ///
    /// # Errors
    ///
    /// Two systems of one name ([`ErrorKind::SystemName`]).
    pub fn from_systems(
        systems: impl IntoIterator<Item = SystemSettings>,
    ) -> Result<Self, SettingsError> {
        let mut map = BTreeMap::new();
        for system in systems {
            let name = system.name().to_owned();
            if map.insert(name.clone(), system).is_some() {
                return Err(SettingsError::new(
                    ErrorKind::SystemName,
                    builder::ORIGIN,
                    format!("two systems named `{name}`: each system has one entry"),
                )
                .system(&name));
            }
        }
        Ok(Settings {
            origin: builder::ORIGIN.to_owned(),
            systems: map,
        })
    }

    /// Checks that every system in `systems` has an entry: an error of kind
    /// [`ErrorKind::MissingSystem`] naming each one missing.
    ///
    /// # Errors
    ///
    /// When any of `systems` has no entry.
    pub fn require_systems<'a>(
        &self,
        systems: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), SettingsError> {
        let missing: Vec<&str> = systems
            .into_iter()
            .filter(|name| !self.systems.contains_key(*name))
            .collect();
        let Some(first) = missing.first() else {
            return Ok(());
        };
        let tables: Vec<String> = missing.iter().map(|m| format!("[systems.{m}]")).collect();
        Err(SettingsError::new(
            ErrorKind::MissingSystem,
            &self.origin,
            format!(
                "missing {}: this binary was compiled with `#[circuit_breaker]` calls to {}; add a `[systems.{first}]` table (the settings hold {})",
                quoted_list(tables.iter().map(String::as_str)),
                if missing.len() == 1 { "it" } else { "them" },
                quoted_list(self.names()),
            ),
        )
        .system(first))
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

    /// Validates a raw file (defaults applied) into settings.
    pub(crate) fn resolve(mut file: raw::RawFile, origin: &str) -> Result<Self, SettingsError> {
        file.apply_defaults();
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
}
