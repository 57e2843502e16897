//! A team's `resilience.toml` tested in `cargo test` against its own recordings: "our
//! settings fail fast within 2 s on last month's incident" and "they refuse no more than
//! 10 healthy calls on a healthy day", each answered as `outbound-guard replay` would
//! answer it: met, missed, or cannot tell (with the estimate and its interval where the
//! recording lacks the answers of the calls its guard refused). The replay's draws are
//! seeded: the same recording and settings answer the same on every run.

use std::io::BufReader;
use std::path::Path;
use std::time::Duration;

use flate2::bufread::MultiGzDecoder;
use outbound_guard_replay::{FigureKind, Known, Prepared, Recording, Subject, Told, Variant};
use outbound_guard_settings::Settings;

/// What a recording tells of an objective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Met however the calls the recording lacks the answers of had been answered.
    Met,
    /// Missed, and how, in the words of `outbound-guard replay`'s screen.
    Missed(String),
    /// The recording cannot tell, and why (the estimate and its interval, where there is
    /// one).
    CannotTell(String),
}

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
    /// them (on the same seeded draws of the answers the recording lacks).
    fn replayed(&self, system: &str) -> Result<(Prepared<'_>, Variant), Answer> {
        let (Some(calls), Some(settings)) = (
            self.recording.systems.get(system),
            self.settings.system(system),
        ) else {
            return Err(Answer::CannotTell(format!(
                "the recording or the settings have no system `{system}`"
            )));
        };
        let mut prepared = Prepared::new(system, calls, None).with_draws(Prepared::DRAWS);
        let variant = prepared.ran_with("as set", settings);
        Ok((prepared, variant))
    }

    /// Whether `system` fails fast within `within` in every incident of the recording.
    pub fn fails_fast_within(&self, system: &str, within: Duration) -> Answer {
        let (prepared, variant) = match self.replayed(system) {
            Ok(replayed) => replayed,
            Err(answer) => return answer,
        };
        let within = u64::try_from(within.as_micros()).unwrap_or(u64::MAX);
        let mut answer = Answer::Met;
        let mut any = false;
        for (i, _) in prepared.incidents().enumerate() {
            any = true;
            let n = i + 1;
            match prepared.known(&variant, Subject::FastFail(i)) {
                Known::Told(t) if t.high <= within => {}
                Known::Told(t) if t.low > within => {
                    return Answer::Missed(format!(
                        "{system} fails fast in incident {n} {}, not within {}",
                        after(t),
                        span(within)
                    ));
                }
                Known::Told(t) => {
                    answer = cannot(answer, || {
                        format!(
                            "cannot tell whether {system} fails fast within {} in incident {n}: {}",
                            span(within),
                            between(t, true)
                        )
                    });
                }
                Known::CannotTell(why) => {
                    answer = cannot(answer, || {
                        format!("cannot tell whether {system} fails fast in incident {n}: {why}")
                    });
                }
            }
        }
        if any {
            answer
        } else {
            Answer::CannotTell(format!("the recording has no incident of {system}"))
        }
    }

    /// Whether `system` refuses at most `most` healthy calls over the recording.
    pub fn refuses_at_most(&self, system: &str, most: u64) -> Answer {
        let (prepared, variant) = match self.replayed(system) {
            Ok(replayed) => replayed,
            Err(answer) => return answer,
        };
        match prepared.known(&variant, Subject::Figure(FigureKind::HealthyRefused)) {
            Known::Told(t) if t.high <= most => Answer::Met,
            Known::Told(t) if t.low > most => Answer::Missed(format!(
                "{system} refuses {} healthy calls, more than {}",
                count(t),
                thousands(most)
            )),
            Known::Told(t) => Answer::CannotTell(format!(
                "cannot tell whether {system} refuses at most {} healthy calls: {}",
                thousands(most),
                between(t, false)
            )),
            Known::CannotTell(why) => Answer::CannotTell(format!(
                "cannot tell how many healthy calls {system} refuses: {why}"
            )),
        }
    }
}

/// The first answer that cannot tell is kept.
fn cannot(answer: Answer, why: impl FnOnce() -> String) -> Answer {
    match answer {
        Answer::Met => Answer::CannotTell(why()),
        other => other,
    }
}

/// A time to fast fail as the screen says it: `after 2.5 s`, `after ≈2.5 s`, `never`.
fn after(t: Told) -> String {
    match t.value {
        u64::MAX => "never".to_owned(),
        v if t.exact() => format!("after {}", span(v)),
        v => format!("after ≈{}", span(v)),
    }
}

/// An estimate and its interval: `≈900 ms, between 500 ms and 1.4 s`.
fn between(t: Told, time: bool) -> String {
    let words = |v: u64| match v {
        u64::MAX => "never".to_owned(),
        v if time => span(v),
        v => thousands(v),
    };
    format!(
        "≈{}, between {} and {}",
        words(t.value),
        words(t.low),
        words(t.high)
    )
}

/// A count as the screen says it: `40` exact, `≈1,722 ±310` estimated.
fn count(t: Told) -> String {
    if t.exact() {
        thousands(t.value)
    } else {
        let err = t.value.abs_diff(t.low).max(t.high.abs_diff(t.value));
        format!("≈{} ±{}", thousands(t.value), thousands(err))
    }
}

/// A span as the screen says it: `850 ms`, `12.3 s`, `4m 10s`.
fn span(micros: u64) -> String {
    let d = Duration::from_micros(micros);
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if d < Duration::from_secs(120) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{}m {}s", d.as_secs() / 60, d.as_secs() % 60)
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
