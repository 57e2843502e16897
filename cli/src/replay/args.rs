//! The arguments of `replay`.

use std::path::PathBuf;

use clap::Args;

use crate::args::EnvFlag;

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The recording: JSON lines as the runtime's recorder writes them (`-` reads stdin).
    pub(crate) recording: PathBuf,
    /// The settings to replay through (default: the guide's defaults for every system).
    #[arg(long, value_name = "FILE")]
    pub(crate) settings: Option<PathBuf>,
    /// Also replay with one key changed in every system (`cb_failure_rate=0.3`); repeat
    /// it for more settings side by side.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) compare: Vec<String>,
    /// Only this system (default: every system of the recording).
    #[arg(long, value_name = "S")]
    pub(crate) system: Option<String>,
    /// Refuse the recording at its first line that cannot be read (default: skip it and
    /// report its number).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Write an SVG timeline: this file for one system, `NAME-SYSTEM.svg` beside it for
    /// several.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) out: Option<PathBuf>,
    /// Print the figures as JSON instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) env: EnvFlag,
}
