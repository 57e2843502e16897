//! One error type for every settings problem, saying where it is and what is allowed.

use std::fmt;

use crate::keys::Key;
pub use crate::span::Location;

/// What kind of problem a [`SettingsError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is not valid TOML, or not shaped as `[systems.NAME]` tables.
    Syntax,
    /// A key no system table knows.
    UnknownKey,
    /// An environment override names a system the file does not have.
    UnknownSystem,
    /// A system name that is not allowed (`default`, or not `lower_snake_case`).
    SystemName,
    /// A value of the wrong type, or one that does not parse.
    Malformed,
    /// A value outside what its key allows.
    OutOfRange,
    /// Values that are fine alone but break an ordering rule (connect < read < total).
    Order,
    /// The settings lack a system the binary was compiled against
    /// ([`Loader::require_systems`](crate::Loader::require_systems)).
    MissingSystem,
    /// The settings file could not be read.
    Io,
}

/// A settings problem: names the file or environment variable, the system, the key,
/// and what is allowed. A problem with a value written in the file also names its line
/// and column ([`location`](SettingsError::location)), as compilers do:
///
/// ```text
/// resilience.toml:7:19: [systems.sber] `cb_failure_rate`: got 1.5, expected a share …
/// ```
///
/// `Debug` shows the same sentence as `Display` (`{:#?}` shows the fields), so that
/// `fn main() -> Result<(), Box<dyn Error>>` prints a readable line at startup.
#[derive(Clone, PartialEq, Eq)]
pub struct SettingsError {
    kind: ErrorKind,
    origin: String,
    system: Option<String>,
    defaults: bool,
    key: Option<Key>,
    variable: Option<String>,
    location: Option<Location>,
    message: String,
}

impl SettingsError {
    pub(crate) fn new(kind: ErrorKind, origin: &str, message: impl Into<String>) -> Self {
        SettingsError {
            kind,
            origin: origin.to_owned(),
            system: None,
            defaults: false,
            key: None,
            variable: None,
            location: None,
            // Text the user wrote may be quoted (a value, a TOML parser's excerpt of the
            // line): credentials in any URL in it are masked.
            message: crate::secret::mask_urls_in(&message.into()),
        }
    }

    pub(crate) fn system(mut self, system: &str) -> Self {
        self.system = Some(system.to_owned());
        self
    }

    pub(crate) fn in_defaults(mut self) -> Self {
        self.defaults = true;
        self
    }

    pub(crate) fn at_key(mut self, key: Key) -> Self {
        self.key = Some(key);
        self
    }

    pub(crate) fn variable(mut self, variable: Option<&str>) -> Self {
        self.variable = variable.map(str::to_owned);
        self
    }

    /// Where in the file the problem is written, when it is on a key or value of the
    /// file (not an environment variable's).
    pub(crate) fn at(mut self, location: Option<Location>) -> Self {
        if location.is_some() {
            self.location = location;
        }
        self
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The settings file the problem was found in (or applies to).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The system the problem is about, if one: the table with the problem, the system
    /// an environment variable names, or the first system missing from the settings.
    pub fn system_name(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The key with the problem, if it is about one key.
    pub fn key(&self) -> Option<Key> {
        self.key
    }

    /// The environment variable that set the offending value, if one did.
    pub fn variable_name(&self) -> Option<&str> {
        self.variable.as_deref()
    }

    /// Where in the file the offending key or value is written (line and column), when
    /// the problem is in the file; `None` for an environment variable's value, code-built
    /// or deserialised settings, and problems of the whole file.
    pub fn location(&self) -> Option<Location> {
        self.location
    }

    /// The problem alone, without the file, system and key prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(variable) = &self.variable {
            write!(f, "environment variable `{variable}`: ")?;
        } else if let Some(location) = self.location {
            write!(f, "{}:{location}: ", self.origin)?;
        } else {
            write!(f, "{}: ", self.origin)?;
        }
        // A variable naming an unknown system or key names them itself; a missing
        // system has no table to point at.
        let named_by_variable = self.variable.is_some()
            && matches!(self.kind, ErrorKind::UnknownSystem | ErrorKind::UnknownKey);
        if self.defaults {
            match self.key {
                Some(key) => write!(f, "[defaults] `{key}`: ")?,
                None => write!(f, "[defaults]: ")?,
            }
        } else if !named_by_variable && self.kind != ErrorKind::MissingSystem {
            match (&self.system, self.key) {
                (Some(system), Some(key)) => write!(f, "[systems.{system}] `{key}`: ")?,
                (Some(system), None) => write!(f, "[systems.{system}]: ")?,
                (None, _) => {}
            }
        }
        f.write_str(&self.message)
    }
}

impl fmt::Debug for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_struct("SettingsError")
                .field("kind", &self.kind)
                .field("origin", &self.origin)
                .field("system", &self.system)
                .field("defaults", &self.defaults)
                .field("key", &self.key)
                .field("variable", &self.variable)
                .field("location", &self.location)
                .field("message", &self.message)
                .finish()
        } else {
            fmt::Display::fmt(self, f)
        }
    }
}

impl std::error::Error for SettingsError {}
