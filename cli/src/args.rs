//! The command line: the commands and their arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Check, explain, simulate, replay and tune an outbound-guard settings file
/// (`resilience.toml`).
#[derive(Debug, Parser)]
#[command(name = "outbound-guard", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Validate a settings file exactly as a service does at startup: exit 0 when it is
    /// valid, 1 when it is not, 2 on a usage error.
    Check {
        /// The settings file.
        file: PathBuf,
        /// The systems the binary calls (comma-separated): each must have a table.
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        systems: Vec<String>,
        #[command(flatten)]
        env: EnvFlag,
    },
    /// Print every system's effective values and where each came from: the guide's
    /// default, a derivation rule, `[defaults]`, the system's table (with its line) or an
    /// environment variable. A value set that restates the guide's default is marked
    /// `(default)`, and each system closes with how many do.
    Explain {
        /// The settings file.
        file: PathBuf,
        #[command(flatten)]
        env: EnvFlag,
    },
    /// Run each system's real guard against a scripted upstream on a paused clock and
    /// report how fast it fails, fails fast and recovers.
    Simulate(SimulateArgs),
    /// Replay a recording of real calls through the real guard with other settings:
    /// openings, failing calls let through, healthy calls refused, time to fast fail.
    Replay(ReplayArgs),
    /// Search the settings each system should run, from a recording of its own traffic
    /// (best an observe-mode one): the recommended setting against objectives stated in
    /// a person's terms, the alternatives that trade one for another, and the evidence.
    ///
    /// Exit status: 0 every system has a recommended setting; 1 a settings or file
    /// problem; 2 a usage problem; 3 no system has one (none meets every objective or is
    /// known better than the settings as run, or the recording cannot be tuned); 4 some
    /// systems have one and some have not. With 3 or 4, `--write` writes nothing.
    Tune(TuneArgs),
}

#[derive(Debug, Args)]
pub(crate) struct EnvFlag {
    /// Apply the process environment's `CLIENT_<SYSTEM>__<KEY>` overrides, as a service
    /// does at startup (without it, the file alone).
    #[arg(long)]
    pub(crate) env: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The settings file.
    pub(crate) file: PathBuf,
    /// Only this system (default: every system in the file).
    #[arg(long, value_name = "S")]
    pub(crate) system: Option<String>,
    /// Only this scenario (default: all of them).
    #[arg(long, value_enum)]
    pub(crate) scenario: Option<ScenarioKind>,
    /// The share of upstream answers that are errors in the `errors` scenario.
    #[arg(long, value_name = "R", default_value_t = 0.6)]
    pub(crate) rate: f64,
    /// Successful calls before the fault (the warm run; 0 runs only the cold one).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub(crate) warm: u32,
    /// One caller arrives this often.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = duration)]
    pub(crate) every: Duration,
    /// How long callers keep arriving after the fault starts (recovery: after it ends).
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = duration)]
    pub(crate) duration: Duration,
    /// How long a healthy or failing upstream takes to answer (at once by default, as
    /// in the runtime's own paused-time tests).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = duration)]
    pub(crate) latency: Duration,
    /// How long a slow upstream takes (default: halfway between `cb_slow_threshold` and
    /// `total_timeout`).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub(crate) slow: Option<Duration>,
    /// The `Retry-After` of every answer in the `429` scenario.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = duration)]
    pub(crate) retry_after: Duration,
    /// How long the recovery scenario's hang lasts.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub(crate) fault_for: Duration,
    /// `queue`: the upstream's workers (calls served at once; more wait in its queue).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub(crate) workers: u32,
    /// `queue`: its workers during the degraded phase (`--fault-for` long).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub(crate) degraded: u32,
    /// `queue`: how long a worker takes to serve one call.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = duration)]
    pub(crate) service: Duration,
    /// `queue`: callers calling in a loop, each one call at a time.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub(crate) callers: u32,
    /// `queue`: how long each healthy phase lasts, before the drop and after it.
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = duration)]
    pub(crate) phase: Duration,
    /// Also run every system with one key changed (`cb_failure_rate=0.3`), or several
    /// that must change together (`read_timeout=5,total_timeout=6`), side by side;
    /// repeat it to compare several alternatives.
    #[arg(long, value_name = "KEY=VALUE[,KEY=VALUE]")]
    pub(crate) compare: Vec<String>,
    /// Write one SVG timeline per system and scenario into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Print the figures as JSON instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) env: EnvFlag,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The recording: JSON lines as the runtime's recorder writes them (`-` reads stdin).
    pub(crate) recording: PathBuf,
    /// The settings to replay through (default: the guide's defaults for every system).
    #[arg(long, value_name = "FILE")]
    pub(crate) settings: Option<PathBuf>,
    /// Also replay with one key changed in every system (`cb_failure_rate=0.3`), or
    /// several that must change together (`read_timeout=5,total_timeout=6`); repeat it
    /// for more settings side by side.
    #[arg(long, value_name = "KEY=VALUE[,KEY=VALUE]")]
    pub(crate) compare: Vec<String>,
    /// Only this system (default: every system of the recording).
    #[arg(long, value_name = "S")]
    pub(crate) system: Option<String>,
    /// Another replica's recording of the same systems (the same upstreams, called by
    /// another instance of the service): the calls it ran answer this recording's calls
    /// that have no outcome (refused by its own guard) at about the same time. Repeat it
    /// for more replicas.
    #[arg(long, value_name = "FILE")]
    pub(crate) replica: Vec<PathBuf>,
    /// How many replays of each setting may be spent walking the ways of answering the
    /// calls without a recorded outcome (default: as many as make about half a million
    /// replayed calls, at least 2, at most 1024). Within it, every way is replayed and
    /// each range holds every figure those calls could give; past it, no range is
    /// given: each figure is the estimate with its error, or "cannot tell".
    #[arg(long, value_name = "N")]
    pub(crate) max_replays: Option<usize>,
    /// Refuse the recording at its first line that cannot be read (default: skip it and
    /// report its number).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Write an SVG timeline: this file for one system, `NAME-SYSTEM.svg` beside it for
    /// several.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) out: Option<PathBuf>,
    /// Print the numbers behind the verdicts: each figure of each setting, how many of
    /// its calls were guessed, the ranges that hold every way where every way was
    /// replayed, and the openings.
    #[arg(long, conflicts_with = "json")]
    pub(crate) detail: bool,
    /// Print everything as JSON instead: figures, ranges, verdicts, openings.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) env: EnvFlag,
}

#[derive(Debug, Args)]
pub(crate) struct TuneArgs {
    /// The recording: JSON lines as the runtime's recorder writes them (`-` reads stdin);
    /// best recorded in observe mode (`cb_mode = "observe"`), where every figure is exact.
    pub(crate) recording: PathBuf,
    /// The settings the service ran with: the search starts from them, and `--write`
    /// changes them.
    #[arg(long, value_name = "FILE")]
    pub(crate) settings: PathBuf,
    /// Only this system (default: every system of the recording the file has).
    #[arg(long, value_name = "S")]
    pub(crate) system: Option<String>,
    /// Objective: refuse at most this share of the recording's healthy calls
    /// (`1%`, or `0.01`; the default allows what a breaker that opens refuses after an
    /// incident ends, before its next trial).
    #[arg(long, value_name = "SHARE", default_value = "1%", value_parser = share)]
    pub(crate) healthy_refused: f64,
    /// Objective: fail fast within this long in every incident (from its first failure
    /// to the first call refused; an incident over sooner meets it).
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = duration)]
    pub(crate) fail_fast_within: Duration,
    /// Objective: let at most this many failing calls through, over the recording
    /// (default: no cap; fewer is better).
    #[arg(long, value_name = "N")]
    pub(crate) failing_through: Option<u64>,
    /// The most settings tried per system.
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) max_settings: u32,
    /// Threads replaying settings at once (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) jobs: Option<u32>,
    /// Write the settings file with the recommended keys changed (comments and every
    /// other line kept), once it loads as `outbound-guard check` loads it.
    #[arg(long, value_name = "FILE")]
    pub(crate) write: Option<PathBuf>,
    /// Refuse the recording at its first line that cannot be read (default: skip it and
    /// report its number).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Print everything as JSON instead: every setting on the front, its figures, how
    /// sure each is, and the objectives it meets.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) env: EnvFlag,
}

/// A share on the command line: `0.1%`, or `0.001`; from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    }
    .map_err(|_| format!("{text:?} is not a share: expected such as 0.1% or 0.001"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{text:?}: expected a share from 0 to 1 (0% to 100%)"
        ))
    }
}

/// A duration on the command line: `100ms`, `2.5s`, `1m 30s`, or a number of seconds.
fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("{text:?} is not a duration: expected seconds ≥ 0"));
    }
    if let Some(seconds) = text
        .strip_suffix('s')
        .filter(|n| !n.ends_with('m'))
        .and_then(|n| n.parse::<f64>().ok())
    {
        return Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("{text:?} is not a duration: expected seconds ≥ 0"));
    }
    humantime::parse_duration(text).map_err(|e| {
        format!("{text:?} is not a duration ({e}): write it with a unit, such as 100ms, 2.5s or 1m")
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_or_seconds() {
        assert_eq!(duration("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(duration("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert!(duration("-1").is_err());
        assert!(duration("soon").unwrap_err().contains("with a unit"));
    }

    #[test]
    fn shares_take_percent_or_a_fraction() {
        assert!((share("0.1%").unwrap() - 0.001).abs() < 1e-12);
        assert_eq!(share("0.25"), Ok(0.25));
        assert_eq!(share("100%"), Ok(1.0));
        assert!(share("120%").unwrap_err().contains("from 0 to 1"));
        assert!(share("-0.1").is_err());
        assert!(share("a lot").unwrap_err().contains("not a share"));
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

/// The scenarios `simulate` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScenarioKind {
    /// The upstream never answers.
    Hang,
    /// A share (`--rate`) of the upstream's answers are errors.
    Errors,
    /// The upstream answers, after `--slow`.
    Slow,
    /// The upstream hangs for `--fault-for`, then is healthy again.
    Recovery,
    /// The upstream answers every call with 429 and `Retry-After: --retry-after`: the
    /// breaker stays open as long as it asked (capped by `cb_open_max`).
    #[value(name = "429")]
    RateLimited,
    /// The upstream has `--workers` workers of `--service` each behind a queue, so its
    /// latency grows with the calls in flight; `--callers` call it in a loop; its
    /// workers drop to `--degraded` for `--fault-for`. Run only when asked for.
    Queue,
}

impl ScenarioKind {
    /// The name used in tables, JSON and file names.
    pub fn name(self) -> &'static str {
        match self {
            ScenarioKind::Hang => "hang",
            ScenarioKind::Errors => "errors",
            ScenarioKind::Slow => "slow",
            ScenarioKind::Recovery => "recovery",
            ScenarioKind::RateLimited => "429",
            ScenarioKind::Queue => "queue",
        }
    }
}
