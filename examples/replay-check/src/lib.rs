//! A team's `resilience.toml` tested in `cargo test` against its own recordings: "our
//! settings fail fast within 1 s on last month's incident" and "they refuse no more than
//! 10 healthy calls on a healthy day". The replay library answers each as `outbound-guard
//! replay` and `tune` would: met, missed, or cannot tell, with the estimate and its
//! interval where the recording lacks the answers of the calls its guard refused, in the
//! screen's words ([`Meets`]). All a team writes is this file: reading its two files and
//! replaying a system through its settings. The replay's draws are seeded: the same
//! recording and settings answer the same on every run.

use std::io::BufReader;
use std::path::Path;

use flate2::bufread::MultiGzDecoder;
pub use outbound_guard_replay::Meets;
use outbound_guard_replay::{Prepared, Recording, Variant};
use outbound_guard_settings::Settings;

/// A settings file and a recording to replay through it.
pub struct Check {
    recording: Recording,
    settings: Settings,
}

impl Check {
    /// The settings at `settings` and the gzipped recording at `recording`.
    ///
    /// # Errors
    ///
    /// Either file cannot be read, or is not valid: the message names it.
    pub fn load(settings: &Path, recording: &Path) -> Result<Check, String> {
        let text = std::fs::read_to_string(settings)
            .map_err(|e| format!("cannot read {}: {e}", settings.display()))?;
        let settings =
            Settings::parse(&text, &settings.display().to_string()).map_err(|e| e.to_string())?;
        let file = std::fs::File::open(recording)
            .map_err(|e| format!("cannot read {}: {e}", recording.display()))?;
        let input = BufReader::new(MultiGzDecoder::new(BufReader::new(file)));
        let recording =
            Recording::read(input, true).map_err(|e| format!("{}: {e}", recording.display()))?;
        Ok(Check {
            recording,
            settings,
        })
    }

    /// `system`'s recorded calls replayed through its settings, as `replay` replays
    /// them (on the same seeded draws of the answers the recording lacks): ask the
    /// prepared recording whether the replay meets an objective
    /// ([`Prepared::fails_fast_within`], [`Prepared::refuses_at_most`]).
    ///
    /// # Errors
    ///
    /// The recording or the settings have no such system.
    pub fn replay(&self, system: &str) -> Result<(Prepared<'_>, Variant), String> {
        let calls = self.recording.systems.get(system);
        let settings = self.settings.system(system);
        let (Some(calls), Some(settings)) = (calls, settings) else {
            return Err(format!(
                "the recording or the settings have no system `{system}`"
            ));
        };
        let mut prepared = Prepared::new(system, calls, None).with_draws(Prepared::DRAWS);
        let variant = prepared.ran_with("as set", settings);
        Ok((prepared, variant))
    }
}
