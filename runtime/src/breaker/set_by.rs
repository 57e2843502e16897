//! Who forced a breaker open or disabled it: the settings file's `cb_mode`, or an
//! operator through the API ([`Guards::manual`](crate::Guards::manual), the breaker's
//! own methods).

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

/// Nobody has made a manual action yet.
pub(super) const NOBODY: u8 = 0;
const FILE: u8 = 1;
const OPERATOR: u8 = 2;

impl SetBy {
    /// Its code in the breaker's atomic.
    pub(super) const fn code(self) -> u8 {
        match self {
            SetBy::File => FILE,
            SetBy::Operator => OPERATOR,
        }
    }

    /// The code's value, `None` for [`NOBODY`].
    pub(super) const fn from_code(code: u8) -> Option<SetBy> {
        match code {
            FILE => Some(SetBy::File),
            OPERATOR => Some(SetBy::Operator),
            _ => None,
        }
    }
}
