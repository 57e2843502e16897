//! What a command's failure is: a settings, usage or I/O problem (`main` turns it into
//! the exit code).

use outbound_guard_settings::SettingsError;

/// What went wrong: a settings problem (exit 1), or a usage problem (exit 2).
pub(crate) enum Failure {
    Settings(SettingsError),
    Usage(String),
    Io(String),
    /// The answer is printed, and says no: exit with this status (3 or more), the
    /// message (if any) on stderr.
    Answer(u8, String),
}

impl From<SettingsError> for Failure {
    fn from(error: SettingsError) -> Self {
        Failure::Settings(error)
    }
}
