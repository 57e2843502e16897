//! [`ManualAction`]: what an operator (or the settings file's `cb_mode`) does to a
//! breaker, and its names.

use std::fmt;
use std::str::FromStr;

/// An operator's action on a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManualAction {
    /// Forced open: every call rejected.
    ForceOpen,
    /// Forced closed: every call admitted, nothing counted.
    Disable,
    /// Back to closed with an empty window.
    Reset,
}

impl ManualAction {
    /// Its name: `force_open`, `disable` or `reset`.
    pub fn as_str(self) -> &'static str {
        match self {
            ManualAction::ForceOpen => "force_open",
            ManualAction::Disable => "disable",
            ManualAction::Reset => "reset",
        }
    }
}

impl fmt::Display for ManualAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operator's action named in words, as an admin endpoint receives it:
/// `force_open` (or `force-open`), `disable` (or `force_closed`, `force-closed`), `reset`.
/// Bare `open` and `closed` are refused: "closed" would read as "back to normal", which
/// is `reset`, while forcing closed disables the breaker.
impl FromStr for ManualAction {
    type Err = UnknownAction;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "force_open" | "force-open" => Ok(ManualAction::ForceOpen),
            "disable" | "force_closed" | "force-closed" => Ok(ManualAction::Disable),
            "reset" => Ok(ManualAction::Reset),
            _ => Err(UnknownAction(s.to_owned())),
        }
    }
}

/// A name that is not an operator's action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown breaker action `{0}`; expected `force_open`, `disable` (forced closed: every call admitted, nothing counted) or `reset` (back to closed)")]
pub struct UnknownAction(String);

#[cfg(test)]
mod tests {
    use super::ManualAction;

    #[test]
    fn actions_parse_from_words() {
        assert_eq!("force_open".parse(), Ok(ManualAction::ForceOpen));
        assert_eq!("force-closed".parse(), Ok(ManualAction::Disable));
        assert_eq!("reset".parse(), Ok(ManualAction::Reset));
        let err = "close".parse::<ManualAction>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown breaker action `close`; expected `force_open`, `disable` (forced closed: every call admitted, nothing counted) or `reset` (back to closed)"
        );
    }

    #[test]
    fn each_action_parses_from_its_own_name() {
        for action in [
            ManualAction::ForceOpen,
            ManualAction::Disable,
            ManualAction::Reset,
        ] {
            assert_eq!(action.as_str().parse(), Ok(action));
            assert_eq!(action.to_string(), action.as_str());
        }
    }
}
