//! `outbound-guard`: check, explain and simulate a `resilience.toml` before it is
//! deployed.
//!
//! - `check FILE [--systems a,b] [--env]`: validates the file with the settings crate's
//!   own loader, as a service does at startup (exit 0 valid, 1 invalid, 2 usage);
//! - `explain FILE [--env]`: every effective value per system and where it came from;
//! - `simulate FILE …`: runs each system's real `Guard` against a scripted upstream on
//!   tokio's paused clock and reports how fast it fails and recovers.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use outbound_guard_settings::{Loader, Settings, SettingsError};

mod explain;
mod plot;
mod simulate;

/// Check, explain and simulate an outbound-guard settings file (`resilience.toml`).
#[derive(Debug, Parser)]
#[command(name = "outbound-guard", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
    /// environment variable.
    Explain {
        /// The settings file.
        file: PathBuf,
        #[command(flatten)]
        env: EnvFlag,
    },
    /// Run each system's real guard against a scripted upstream on a paused clock and
    /// report how fast it fails, fails fast and recovers.
    Simulate(SimulateArgs),
}

#[derive(Debug, Args)]
struct EnvFlag {
    /// Apply the process environment's `CLIENT_<SYSTEM>__<KEY>` overrides, as a service
    /// does at startup (without it, the file alone).
    #[arg(long)]
    env: bool,
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
}

impl ScenarioKind {
    /// The name used in tables, JSON and file names.
    pub fn name(self) -> &'static str {
        match self {
            ScenarioKind::Hang => "hang",
            ScenarioKind::Errors => "errors",
            ScenarioKind::Slow => "slow",
            ScenarioKind::Recovery => "recovery",
        }
    }
}

#[derive(Debug, Args)]
struct SimulateArgs {
    /// The settings file.
    file: PathBuf,
    /// Only this system (default: every system in the file).
    #[arg(long, value_name = "S")]
    system: Option<String>,
    /// Only this scenario (default: all four).
    #[arg(long, value_enum)]
    scenario: Option<ScenarioKind>,
    /// The share of upstream answers that are errors in the `errors` scenario.
    #[arg(long, value_name = "R", default_value_t = 0.6)]
    rate: f64,
    /// Successful calls before the fault (the warm run; 0 runs only the cold one).
    #[arg(long, value_name = "N", default_value_t = 60)]
    warm: u32,
    /// One caller arrives this often.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = duration)]
    every: Duration,
    /// How long callers keep arriving after the fault starts (recovery: after it ends).
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = duration)]
    duration: Duration,
    /// How long a healthy or failing upstream takes to answer (at once by default, as
    /// in the runtime's own paused-time tests).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = duration)]
    latency: Duration,
    /// How long a slow upstream takes (default: halfway between `cb_slow_threshold` and
    /// `total_timeout`).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    slow: Option<Duration>,
    /// How long the recovery scenario's hang lasts.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    fault_for: Duration,
    /// Also run every system with one key changed (`cb_failure_rate=0.3`), side by side.
    #[arg(long, value_name = "KEY=VALUE")]
    compare: Option<String>,
    /// Write one SVG timeline per system and scenario into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the figures as JSON instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    env: EnvFlag,
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

/// What went wrong: a settings problem (exit 1), or a usage problem (exit 2).
enum Failure {
    Settings(SettingsError),
    Usage(String),
    Io(String),
}

impl From<SettingsError> for Failure {
    fn from(error: SettingsError) -> Self {
        Failure::Settings(error)
    }
}

/// The loader a service uses at startup: the file alone, or with the process
/// environment's overrides.
fn loader(env: &EnvFlag) -> Loader {
    if env.env {
        Loader::new()
    } else {
        Loader::new().env(std::iter::empty::<(String, String)>())
    }
}

/// Reads and validates `file` as a service does at startup.
fn load(file: &PathBuf, env: &EnvFlag, systems: &[String]) -> Result<Settings, SettingsError> {
    loader(env).require_systems(systems).read(file)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file, systems, env } => check(&file, &systems, &env),
        Command::Explain { file, env } => explain::run(&file, &env),
        Command::Simulate(args) => simulate::run_command(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Settings(error)) => {
            eprintln!("{error}");
            ExitCode::from(1)
        }
        Err(Failure::Io(message)) => {
            eprintln!("outbound-guard: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("outbound-guard: {message}");
            ExitCode::from(2)
        }
    }
}

fn check(file: &PathBuf, systems: &[String], env: &EnvFlag) -> Result<(), Failure> {
    let systems: Vec<String> = systems
        .iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    let settings = load(file, env, &systems)?;
    let names: Vec<&str> = settings.names().collect();
    if names.is_empty() {
        println!("{}: valid, no systems", settings.origin());
    } else {
        println!(
            "{}: valid, {} system{}: {}",
            settings.origin(),
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
    }
    Ok(())
}

/// A duration as a table shows it: `15.1 s`, `500 ms`.
pub fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) && !d.is_zero() {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
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
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
