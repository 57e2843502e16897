//! What every screen of `replay` begins with: the recording's calls, systems, start and
//! span; and the totals of the JSON's throughput line.

use std::fmt::Write as _;
use std::time::Duration;

use outbound_guard_replay::{Recording, SystemReport};

use crate::output::{counted, span};

/// How long reading and replaying took, for the throughput line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Reading the recording.
    pub(crate) read: Duration,
    /// Replaying it.
    pub(crate) replay: Duration,
}

/// The calls of every system's recording.
pub(crate) fn total_calls(reports: &[SystemReport<'_>]) -> usize {
    reports.iter().map(|r| r.recording.calls.len()).sum()
}

/// The calls replayed, over every setting and way of guessing.
pub(crate) fn replayed(reports: &[SystemReport<'_>]) -> usize {
    reports
        .iter()
        .map(|r| r.recording.calls.len() * r.variants.iter().map(|v| v.replays).sum::<usize>())
        .sum()
}

/// The first line of a screen: the recording, its calls and systems, when and how long,
/// and the lines skipped or sorted.
pub(crate) fn preamble(
    path: &std::path::Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
) -> String {
    let last = reports
        .iter()
        .filter_map(|r| r.recording.calls.last().map(|c| c.start))
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "{}: {} of {} from {} over {}",
        path.display(),
        counted(total_calls(reports), "call", "calls"),
        counted(reports.len(), "system", "systems"),
        recording.when(0),
        span(last),
    );
    if !recording.bad_lines.is_empty() {
        let _ = write!(
            out,
            "; {} skipped",
            counted(recording.bad_lines.len(), "line", "lines")
        );
    }
    if recording.out_of_order > 0 {
        let _ = write!(
            out,
            "; {} out of start order (sorted)",
            counted(recording.out_of_order, "line", "lines")
        );
    }
    out.push('\n');
    out
}
