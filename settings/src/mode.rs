//! `cb_mode`: the operator's switch for a breaker, written in the settings file so that
//! editing one `ConfigMap` acts on every replica.

use std::fmt;

/// How a system's breaker is run, by the settings file (`cb_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CbMode {
    /// `auto` (the default): the breaker opens and closes by its window and trials.
    #[default]
    Auto,
    /// `forced_open`: every call is rejected, as an operator's `force_open`.
    ForcedOpen,
    /// `disabled`: every call is admitted and nothing counted, as an operator's `disable`.
    Disabled,
    /// `observe`: every call is admitted and runs; the breaker counts, judges and moves
    /// through its states as in `auto`, but refuses nothing, and its transitions are
    /// reported as what it would have done. The way to roll a breaker out: observe,
    /// record, replay, then enforce (`auto`).
    Observe,
}

impl CbMode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [CbMode; 4] = [
        CbMode::Auto,
        CbMode::ForcedOpen,
        CbMode::Disabled,
        CbMode::Observe,
    ];

    /// The value as written in the file: `auto`, `forced_open`, `disabled`, `observe`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CbMode::Auto => "auto",
            CbMode::ForcedOpen => "forced_open",
            CbMode::Disabled => "disabled",
            CbMode::Observe => "observe",
        }
    }

    /// The mode written `text`, if it is one.
    pub fn from_name(text: &str) -> Option<CbMode> {
        CbMode::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

impl fmt::Display for CbMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::CbMode;

    #[test]
    fn a_mode_displays_as_written_in_the_file() {
        for mode in CbMode::ALL {
            assert_eq!(mode.to_string(), mode.as_str());
            assert_eq!(CbMode::from_name(&mode.to_string()), Some(mode));
        }
    }
}
