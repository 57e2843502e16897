//! How settings are loaded: which environment, which prefix, which systems must be there.

use std::path::{Path, PathBuf};

use crate::env;
use crate::error::{ErrorKind, SettingsError};
use crate::keys::ENV_PREFIX;
use crate::raw;
use crate::settings::Settings;

/// The environment variable that names a settings file mounted at run time (a
/// Kubernetes `ConfigMap`), read instead of the compiled-in one by [`Loader::parse_or_mounted`].
pub const PATH_VARIABLE: &str = "RESILIENCE_SETTINGS";

/// The constructors that load through a [`Loader`] with its defaults.
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
}

/// Loads settings with options: the environment overrides' prefix, the environment
/// itself, and the systems that must be present.
///
/// ```
/// use outbound_guard_settings::Loader;
///
/// let settings = Loader::new()
///     .prefix("PAYMENTS_")
///     .env([("PAYMENTS_SBER__CB_FAILURE_RATE", "0.3"), ("PAYMENTS_TOKEN", "secret")])
///     .require_systems(["sber"])
///     .parse("[systems.sber]", "resilience.toml")
///     .unwrap();
/// assert_eq!(settings.system("sber").unwrap().cb_failure_rate(), 0.3);
/// ```
#[derive(Debug, Clone)]
#[must_use = "a loader does nothing until `parse`, `read` or `parse_or_mounted` is called"]
pub struct Loader {
    prefix: String,
    env: Option<Vec<(String, String)>>,
    /// Each required system, with what declared it when known (for the message).
    required: Vec<(String, Option<String>)>,
}

impl Default for Loader {
    fn default() -> Self {
        Loader::new()
    }
}

impl Loader {
    /// The process environment, the prefix `CLIENT_`, no systems required.
    pub fn new() -> Self {
        Loader {
            prefix: ENV_PREFIX.to_owned(),
            env: None,
            required: Vec::new(),
        }
    }

    /// The environment overrides' prefix instead of `CLIENT_`: upper-case ASCII
    /// letters, digits and `_`, such as `PAYMENTS_`. Checked when loading.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The environment as name/value pairs instead of the process's (tests, or a
    /// service that reads its environment elsewhere).
    pub fn env<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.env = Some(
            vars.into_iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
                .collect(),
        );
        self
    }

    /// Systems the settings must hold: the ones the binary was compiled against. A
    /// file without one of them is an error of kind
    /// [`ErrorKind::MissingSystem`](crate::ErrorKind::MissingSystem) naming it.
    pub fn require_systems<I, S>(mut self, systems: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.required
            .extend(systems.into_iter().map(|s| (s.as_ref().to_owned(), None)));
        self
    }

    /// [`require_systems`](Self::require_systems), each with what declared it in the
    /// binary (`` `#[guarded(system = "sber")]` on `SberAdapter` ``), which the missing
    /// system's error names. For `outbound_guard::settings!()`; not public API.
    #[doc(hidden)]
    pub fn __require_declared<I, S, D>(mut self, systems: I) -> Self
    where
        I: IntoIterator<Item = (S, D)>,
        S: AsRef<str>,
        D: AsRef<str>,
    {
        self.required.extend(
            systems
                .into_iter()
                .map(|(s, by)| (s.as_ref().to_owned(), Some(by.as_ref().to_owned()))),
        );
        self
    }

    /// Parses `text` (the file named `origin` in messages), applies the environment's
    /// overrides, validates, and checks the required systems.
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] for a bad prefix, bad text, a bad override of ours, a broken
    /// rule, or a missing required system.
    pub fn parse(&self, text: &str, origin: &str) -> Result<Settings, SettingsError> {
        self.check_prefix(origin)?;
        let mut file = raw::RawFile::parse(text, origin)?;
        if let Some(vars) = &self.env {
            env::apply(&mut file, origin, &self.prefix, vars.iter().cloned())?;
        } else {
            let vars = env::process_vars(&self.prefix)?;
            env::apply(&mut file, origin, &self.prefix, vars)?;
        }
        let settings = Settings::resolve(file, origin)?;
        settings.require(
            self.required
                .iter()
                .map(|(name, by)| (name.as_str(), by.as_deref())),
        )?;
        Ok(settings)
    }

    /// Reads the file at `path` and [parses](Loader::parse) it; errors name the file as
    /// `path` is written.
    ///
    /// # Errors
    ///
    /// As [`Loader::parse`]; also when the file cannot be read ([`ErrorKind::Io`]).
    pub fn read(&self, path: impl AsRef<Path>) -> Result<Settings, SettingsError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            SettingsError::new(
                ErrorKind::Io,
                &origin,
                format!("cannot read the settings file: {e}"),
            )
        })?;
        self.parse(&text, &origin)
    }

    /// The file [`PATH_VARIABLE`] (`RESILIENCE_SETTINGS`) names, if the environment sets
    /// it to a non-empty path (a file mounted at run time); otherwise `text`, the
    /// compiled-in file named `origin`. Either way the overrides are applied, and the
    /// result validated and checked for the required systems.
    ///
    /// # Errors
    ///
    /// As [`Loader::read`] for a mounted file (an unreadable one names the variable
    /// too), else as [`Loader::parse`].
    pub fn parse_or_mounted(&self, text: &str, origin: &str) -> Result<Settings, SettingsError> {
        match self.mounted() {
            Some(path) => self.read(&path).map_err(|e| {
                if e.kind() == ErrorKind::Io {
                    let message = format!("names `{}`: {}", e.origin(), e.message());
                    SettingsError::new(ErrorKind::Io, e.origin(), message)
                        .variable(Some(PATH_VARIABLE))
                } else {
                    e
                }
            }),
            _ => self.parse(text, origin),
        }
    }

    /// The file [`PATH_VARIABLE`] names in this loader's environment, if it is set to a
    /// non-empty path: the file [`parse_or_mounted`](Self::parse_or_mounted) reads.
    pub fn mounted(&self) -> Option<PathBuf> {
        let path = match &self.env {
            Some(vars) => vars
                .iter()
                .find(|(name, _)| name == PATH_VARIABLE)
                .map(|(_, value)| std::ffi::OsString::from(value)),
            None => std::env::var_os(PATH_VARIABLE),
        }?;
        (!path.is_empty()).then(|| PathBuf::from(path))
    }

    fn check_prefix(&self, origin: &str) -> Result<(), SettingsError> {
        let ok = !self.prefix.is_empty()
            && self
                .prefix
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            && !self.prefix.starts_with(|c: char| c.is_ascii_digit());
        if ok {
            Ok(())
        } else {
            Err(SettingsError::new(
                ErrorKind::Malformed,
                origin,
                format!(
                    "the environment prefix {:?} is not allowed: use upper-case ASCII letters, digits and `_`, such as \"CLIENT_\"",
                    self.prefix
                ),
            ))
        }
    }
}
