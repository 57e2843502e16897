//! [`ManualAction`]: what an operator (or the settings file's `cb_mode`) does to a
//! breaker, and its names: forcing a state, resetting, and turning observe mode on and
//! off, all through one door ([`Breaker::act`](crate::Breaker::act),
//! [`Guards::manual`](crate::Guards::manual)).

use std::fmt;
use std::str::FromStr;

/// An operator's action on a breaker: the same words as the settings file's `cb_mode`
/// (`forced_open`, `disabled`, `observe`), and `reset` and `enforce` to undo them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ManualAction {
    /// Forced open: every call rejected.
    ForceOpen,
    /// Forced closed: every call admitted, nothing counted.
    Disable,
    /// Back to closed with an empty window.
    Reset,
    /// Observe mode on (as `cb_mode = "observe"`): the breaker counts, judges and moves
    /// through its states as usual, but refuses no call (except while forced open), and
    /// its transitions are reported as what it would have done. The state is kept.
    Observe,
    /// Observe mode off: the breaker refuses by the state it is in, from the next call.
    Enforce,
}

impl ManualAction {
    /// Every action, in the order the docs list them.
    pub const ALL: [ManualAction; 5] = [
        ManualAction::ForceOpen,
        ManualAction::Disable,
        ManualAction::Reset,
        ManualAction::Observe,
        ManualAction::Enforce,
    ];

    /// Its name: `force_open`, `disable`, `reset`, `observe` or `enforce`.
    pub fn as_str(self) -> &'static str {
        match self {
            ManualAction::ForceOpen => "force_open",
            ManualAction::Disable => "disable",
            ManualAction::Reset => "reset",
            ManualAction::Observe => "observe",
            ManualAction::Enforce => "enforce",
        }
    }
}

impl fmt::Display for ManualAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operator's action named in words, as an admin endpoint receives it:
/// `force_open` (or `force-open`, or `cb_mode`'s `forced_open`), `disable` (or
/// `force_closed`, `force-closed`, or `cb_mode`'s `disabled`), `reset`, `observe`,
/// `enforce`. Bare `open` and `closed` are refused: "closed" would read as "back to
/// normal", which is `reset`, while forcing closed disables the breaker. So is `cb_mode`'s
/// `auto`, which is two actions (`reset` ends a forced state, `enforce` ends observe mode).
impl FromStr for ManualAction {
    type Err = UnknownAction;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "force_open" | "force-open" | "forced_open" => Ok(ManualAction::ForceOpen),
            "disable" | "disabled" | "force_closed" | "force-closed" => Ok(ManualAction::Disable),
            "reset" => Ok(ManualAction::Reset),
            "observe" => Ok(ManualAction::Observe),
            "enforce" => Ok(ManualAction::Enforce),
            _ => Err(UnknownAction(s.to_owned())),
        }
    }
}

/// A name that is not an operator's action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown breaker action `{0}`; expected `force_open`, `disable` (forced closed: every call admitted, nothing counted), `reset` (back to closed), `observe` (refuse nothing, report what it would do) or `enforce` (observe mode off)")]
pub struct UnknownAction(String);

#[cfg(test)]
mod tests {
    use super::ManualAction;
    use outbound_guard_settings::CbMode;

    /// Every `cb_mode` but `auto` is one action, parsed from the mode's own word (a new
    /// mode fails to compile here until it says which).
    #[test]
    fn each_cb_mode_but_auto_parses_as_its_action() {
        for mode in CbMode::ALL {
            let parsed = mode.as_str().parse::<ManualAction>();
            let expected = match mode {
                CbMode::Auto => None,
                CbMode::ForcedOpen => Some(ManualAction::ForceOpen),
                CbMode::Disabled => Some(ManualAction::Disable),
                CbMode::Observe => Some(ManualAction::Observe),
            };
            assert_eq!(parsed.ok(), expected, "{mode}");
        }
    }

    #[test]
    fn actions_parse_from_words() {
        assert_eq!("force_open".parse(), Ok(ManualAction::ForceOpen));
        assert_eq!("force-closed".parse(), Ok(ManualAction::Disable));
        assert_eq!("reset".parse(), Ok(ManualAction::Reset));
        assert_eq!("observe".parse(), Ok(ManualAction::Observe));
        assert_eq!("enforce".parse(), Ok(ManualAction::Enforce));
        let err = "close".parse::<ManualAction>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown breaker action `close`; expected `force_open`, `disable` (forced closed: every call admitted, nothing counted), `reset` (back to closed), `observe` (refuse nothing, report what it would do) or `enforce` (observe mode off)"
        );
        assert!("auto".parse::<ManualAction>().is_err(), "two actions");
    }

    #[test]
    fn each_action_parses_from_its_own_name() {
        for action in ManualAction::ALL {
            assert_eq!(action.as_str().parse(), Ok(action));
            assert_eq!(action.to_string(), action.as_str());
        }
    }
}
