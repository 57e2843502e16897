//! The figures of `replay` for a person: by default one screen of verdicts per system
//! and alternative ([`screen`]); with `--detail`, the numbers and the ranges proven to
//! hold them ([`detail`]); with `--json`, all of it ([`json`]).

mod detail;
mod json;
pub(crate) mod preamble;
mod screen;

pub(crate) use detail::to_detail;
pub(crate) use json::to_json;
pub(crate) use screen::{to_screen, wrap};
