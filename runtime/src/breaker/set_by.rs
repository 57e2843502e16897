//! Who forced a breaker open or disabled it: the settings file's `cb_mode`, or an
//! operator through the API ([`Guards::manual`](crate::Guards::manual), the breaker's
//! own methods).

use std::sync::atomic::Ordering;

use outbound_guard_settings::CbMode;

use super::{Breaker, ManualAction, State};

/// Who made a breaker's last manual action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SetBy {
    /// The settings file's `cb_mode`, at startup or on a reload.
    File,
    /// An operator, through the API.
    Operator,
}

impl SetBy {
    /// `file` or `operator`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SetBy::File => "file",
            SetBy::Operator => "operator",
        }
    }
}

const FILE: u8 = 1;
const OPERATOR: u8 = 2;

impl Breaker {
    /// A manual action, and who made it.
    pub(crate) fn manual_by(&self, action: ManualAction, by: SetBy) {
        // Stored first: a reading that sees the new state sees who set it (or a later one).
        let code = match by {
            SetBy::File => FILE,
            SetBy::Operator => OPERATOR,
        };
        self.set_by.store(code, Ordering::Release);
        self.manual_action(action);
    }

    /// Who set `state`, if it is one a manual action sets and keeps (0: nobody yet).
    pub(crate) fn set_by_in(&self, state: State) -> Option<SetBy> {
        if !matches!(state, State::ForcedOpen | State::Disabled) {
            return None;
        }
        match self.set_by.load(Ordering::Acquire) {
            FILE => Some(SetBy::File),
            OPERATOR => Some(SetBy::Operator),
            _ => None,
        }
    }

    /// Who forced the breaker open or disabled it, while it is: the file or an operator.
    pub fn set_by(&self) -> Option<SetBy> {
        self.set_by_in(self.state())
    }

    /// Applies the file's `cb_mode` when it changed from `previous` (`None` at startup,
    /// where `auto` changes nothing). Back to `auto`, only a state the file set is reset:
    /// an operator's action stands until an operator undoes it.
    pub(crate) fn apply_mode(&self, mode: CbMode, previous: Option<CbMode>) {
        if previous == Some(mode) {
            return;
        }
        match mode {
            CbMode::ForcedOpen => self.manual_by(ManualAction::ForceOpen, SetBy::File),
            CbMode::Disabled => self.manual_by(ManualAction::Disable, SetBy::File),
            CbMode::Auto => {
                if previous.is_some() && self.set_by() == Some(SetBy::File) {
                    self.manual_by(ManualAction::Reset, SetBy::File);
                }
            }
        }
    }
}
