//! `outbound-guard`: check, explain, simulate, replay and tune a `resilience.toml`.
//!
//! - `check FILE [--systems a,b] [--env]`: validates the file with the settings crate's
//!   own loader, as a service does at startup (exit 0 valid, 1 invalid, 2 usage);
//! - `explain FILE [--env]`: every effective value per system and where it came from;
//! - `simulate FILE …`: runs each system's real `Guard` against a scripted upstream on
//!   tokio's paused clock and reports how fast it fails and recovers;
//! - `replay RECORDING …`: runs recorded calls through each system's real `Guard` with
//!   other settings and reports what they would have done;
//! - `tune RECORDING --settings FILE …`: searches the settings each system should run
//!   from its recorded traffic, against objectives stated in a person's terms.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

mod args;
mod bands;
mod compare;
mod explain;
mod failure;
mod load;
mod output;
mod replay;
mod simulate;
mod tune;

use args::{Cli, Command, EnvFlag};
use failure::Failure;
use load::load;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file, systems, env } => check(&file, &systems, &env),
        Command::Explain { file, env } => explain::run(&file, &env),
        Command::Simulate(args) => simulate::run_command(&args),
        Command::Replay(args) => replay::run_command(&args),
        Command::Tune(args) => tune::run_command(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Settings(error)) => {
            output::warn(&error.to_string());
            ExitCode::from(1)
        }
        Err(Failure::Io(message)) => {
            output::warn(&format!("outbound-guard: {message}"));
            ExitCode::from(1)
        }
        Err(Failure::Usage(message)) => {
            output::warn(&format!("outbound-guard: {message}"));
            ExitCode::from(2)
        }
        Err(Failure::Answer(status, message)) => {
            if !message.is_empty() {
                output::warn(&format!("outbound-guard: {message}"));
            }
            ExitCode::from(status)
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
        output::print(&format!("{}: valid, no systems\n", settings.origin()))
    } else {
        output::print(&format!(
            "{}: valid, {} system{}: {}\n",
            settings.origin(),
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        ))
    }
}
