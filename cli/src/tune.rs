//! `outbound-guard tune RECORDING --settings FILE`: the settings each system should
//! run, searched from its own recorded traffic.
//!
//! Each setting tried is a replay of the recording through the real guard
//! ([`Prepared`], the engine `replay` uses), judged against the
//! objectives a person states ([`Objectives`]). The search ([`Search::run`]) starts from the
//! settings the service ran with and walks one key at a time (the keys the
//! recording can judge, within the settings crate's own limits); the answer
//! ([`answer`]) is the best setting that meets every objective and the ones that trade
//! one objective for another; `--write` changes the file ([`mod@write`]).

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use outbound_guard_settings::{Loader, Settings};

use crate::args::TuneArgs;
use crate::failure::Failure;
use crate::load::vars;
use crate::output::{counted, print, warn};
use crate::replay::{read_recording, recorded_systems, wrap};
use outbound_guard_replay::Recording;
use outbound_guard_replay::{Known, Objectives, Prepared, Search, Told};

mod answer;
mod write;

use answer::{choose, Because, Chosen, Tuned};

/// Replays of each setting spent on the ranges of a recording's calls without an
/// outcome (`replay --max-replays`): past them, each figure is the estimate with its
/// error. `replay`'s default spends up to 1,024 on a short recording; a search tries
/// hundreds of settings.
const TUNE_REPLAYS: usize = 8;

/// Set by Ctrl-C: the search stops after the replays running and answers with the best
/// found so far.
static STOP: AtomicBool = AtomicBool::new(false);

/// Runs `tune`.
pub(crate) fn run_command(args: &TuneArgs) -> Result<(), Failure> {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            // A second Ctrl-C: leave now.
            std::process::exit(130);
        }
    });
    let recording = read(args)?;
    let text = std::fs::read_to_string(&args.settings)
        .map_err(|e| Failure::Io(format!("cannot read {}: {e}", args.settings.display())))?;
    let origin = args.settings.display().to_string();
    let base_vars = vars(&args.env);
    let settings = Loader::new().env(base_vars.clone()).parse(&text, &origin)?;
    let names = systems(args, &recording, &settings)?;
    let objectives = Objectives {
        healthy_refused: args.healthy_refused,
        fail_fast_within: args.fail_fast_within,
        failing_through: args.failing_through,
    };
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        |j| j as usize,
    );
    let progress = progress_bar(args, names.len());
    let search = Search {
        text: &text,
        origin: &origin,
        vars: &base_vars,
        objectives,
        jobs,
        most: args.max_settings as usize,
        stop: &STOP,
        progress: &|| progress.inc(1),
    };
    let started = std::time::Instant::now();
    let mut tuned = Vec::new();
    for name in &names {
        progress.set_message(name.clone());
        let system = &recording.systems[name.as_str()];
        let ran_with = settings
            .system(name)
            .ok_or_else(|| Failure::Usage(format!("{origin} has no `[systems.{name}]`")))?;
        tuned.push(tune_system(name, system, ran_with, &search));
    }
    progress.finish_and_clear();
    let took = started.elapsed();
    // The answer is printed even where it cannot be written.
    let (written, unwritten) = match args
        .write
        .as_ref()
        .map(|to| write_recommended(&text, &tuned, &base_vars, to))
    {
        Some(Ok(path)) => (Some(path), None),
        Some(Err(failure)) => (None, Some(failure)),
        None => (None, None),
    };
    let answered = Answered {
        recording: &recording,
        tuned: &tuned,
        objectives,
        jobs,
        took,
        written,
    };
    if args.json {
        print(&(answered.json(args, &origin) + "\n"))?;
    } else {
        print(&answered.screen(args))?;
    }
    unwritten.map_or_else(
        || status(&tuned).map_or(Ok(()), |s| Err(Failure::Answer(s, String::new()))),
        Err,
    )
}

/// The exit status where not every system has a recommended setting: 3 where none
/// has (nothing could be tuned), 4 where some have and some have not.
pub(crate) const NONE_TUNED: u8 = 3;
/// See [`NONE_TUNED`].
pub(crate) const SOME_TUNED: u8 = 4;

/// [`NONE_TUNED`], [`SOME_TUNED`], or `None` where every system has a recommended
/// setting.
fn status(tuned: &[Tuned<'_>]) -> Option<u8> {
    let with = tuned
        .iter()
        .filter(|t| t.chosen.recommended.is_some())
        .count();
    if with == tuned.len() {
        None
    } else if with == 0 {
        Some(NONE_TUNED)
    } else {
        Some(SOME_TUNED)
    }
}

/// The recording, the lines skipped warned of.
fn read(args: &TuneArgs) -> Result<Recording, Failure> {
    let recording = read_recording(&args.recording, args.strict)?;
    if let Some((line, why)) = recording.bad_lines.first() {
        warn(&format!(
            "outbound-guard: {}: {} skipped (the first: line {line}: {why})",
            args.recording.display(),
            counted(recording.bad_lines.len(), "line", "lines"),
        ));
    }
    Ok(recording)
}

/// What `tune` found, to print.
struct Answered<'a> {
    recording: &'a Recording,
    tuned: &'a [Tuned<'a>],
    objectives: Objectives,
    jobs: usize,
    took: std::time::Duration,
    /// The file written, if one was.
    written: Option<String>,
}

impl Answered<'_> {
    /// Everything, as JSON.
    fn json(&self, args: &TuneArgs, origin: &str) -> String {
        let systems: serde_json::Map<String, serde_json::Value> = self
            .tuned
            .iter()
            .map(|t| (t.name.clone(), t.json(self.recording, self.objectives)))
            .collect();
        let o = self.objectives;
        serde_json::json!({
            "recording": args.recording.display().to_string(),
            "settings": origin,
            "objectives": {
                "healthy_refused": o.healthy_refused,
                "fail_fast_within_ms": o.fail_fast_within.as_secs_f64() * 1000.0,
                "failing_through": o.failing_through,
            },
            "jobs": self.jobs,
            "seconds": self.took.as_secs_f64(),
            "written": self.written,
            "systems": systems,
        })
        .to_string()
    }

    /// The screen: a line of what was tried, each system's answer, how sure.
    fn screen(&self, args: &TuneArgs) -> String {
        let tried = self.tuned.iter().map(|t| t.tried.len()).sum();
        let mut out = format!(
            "{}: {} tried in {:.1} s on {}\n\n",
            args.recording.display(),
            counted(tried, "setting", "settings"),
            self.took.as_secs_f64(),
            counted(self.jobs, "thread", "threads"),
        );
        for t in self.tuned {
            out.push_str(&t.screen(self.recording, self.objectives));
            out.push('\n');
        }
        out.push_str(&legend(self.tuned));
        if let Some(path) = &self.written {
            let line = format!("wrote {path}: the recommended keys changed, the rest as it was");
            let _ = writeln!(out, "{}", wrap(&line, 0, 2, 100));
            for t in self.tuned {
                if let Some((_, Because::BetterThanAsSet)) = t.chosen.recommended {
                    let line = format!(
                        "`{}`: a setting known better than as set, though it does not meet every objective",
                        t.name
                    );
                    let _ = writeln!(out, "  {}", wrap(&line, 2, 4, 100));
                }
            }
        }
        out
    }
}

/// One system searched and chosen from.
fn tune_system<'a>(
    name: &str,
    system: &'a outbound_guard_replay::SystemRecording,
    ran_with: &outbound_guard_settings::SystemSettings,
    search: &Search<'_>,
) -> Tuned<'a> {
    // Every setting on the same draws of the answers the recording lacks, as `replay`
    // draws them: the recommendation and the alternatives are compared on them.
    let mut prepared = Prepared::new(name, system, Some(TUNE_REPLAYS)).with_draws(Prepared::DRAWS);
    let first = prepared.ran_with("as set", ran_with);
    // The healthy calls as the figures count them: the refused ones as their guessed
    // answers have them, with the estimate's error.
    let (healthy, failing) = system.totals();
    let (tried, interrupted, keys) = search.run(&prepared, (name, ran_with), first, healthy);
    // Where the recording has holes, no count of any setting can be told.
    let cannot = prepared.has_holes().then(|| HOLES.to_owned());
    // No breaker at all: no healthy call refused, every failing call let through, each
    // incident its whole length.
    let longest = prepared.incidents().map(|(_, l)| l).max().unwrap_or(0);
    let no_breaker = [exact(0), Known::Told(failing), exact(longest)];
    let chosen = if cannot.is_some() {
        Chosen::default()
    } else {
        choose(&tried, (&no_breaker, &prepared.failing_drawn()))
    };
    Tuned {
        name: name.to_owned(),
        prepared,
        tried,
        chosen,
        interrupted,
        healthy,
        failing,
        keys,
        cannot,
    }
}

/// A value known exactly.
fn exact(value: u64) -> Known {
    Known::Told(Told {
        value,
        low: value,
        high: value,
        guessed: 0,
    })
}

/// Why a recording with holes cannot be tuned.
const HOLES: &str = "its traffic fell while the breaker it ran with was open: the recording has holes where that breaker refused calls (a log taken behind an enforcing guard), and no setting's counts can be told; record in the service, in observe mode (cb_mode = \"observe\"), or log at a proxy in front of the guard";

/// A progress bar on stderr when it is a terminal (none when piped, or with `--json`).
fn progress_bar(args: &TuneArgs, systems: usize) -> ProgressBar {
    if args.json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(u64::from(args.max_settings) * systems as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:30}] {pos}/{len} settings at most, {elapsed} (Ctrl-C: the best so far)",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// The systems to tune: the recording's that the file has, or `--system`.
fn systems(
    args: &TuneArgs,
    recording: &Recording,
    settings: &Settings,
) -> Result<Vec<String>, Failure> {
    let origin = settings.origin();
    let (names, missing): (Vec<String>, Vec<String>) =
        recorded_systems(args.system.as_deref(), recording)?
            .into_iter()
            .partition(|name| settings.system(name).is_some());
    for name in &missing {
        warn(&format!(
            "outbound-guard: the recording's system `{name}` has no `[systems.{name}]` in {origin}: not tuned"
        ));
    }
    if names.is_empty() {
        return Err(Failure::Usage(format!(
            "{origin} has a table for none of the systems to tune ({})",
            missing.join(", ")
        )));
    }
    Ok(names)
}

/// Writes the recommended keys of every system to `to`; an error ([`NONE_TUNED`] or
/// [`SOME_TUNED`]), and nothing written, where a system has no recommendation.
fn write_recommended(
    text: &str,
    tuned: &[Tuned<'_>],
    vars: &[(String, String)],
    to: &std::path::Path,
) -> Result<String, Failure> {
    let mut changes = Vec::new();
    let mut settings = Vec::new();
    for t in tuned {
        let Some(r) = t.chosen.index() else {
            let why = t.cannot.as_deref().map_or_else(
                || {
                    "no setting tried meets every objective or is known better than as set"
                        .to_owned()
                },
                |why| format!("it cannot be tuned: {why}"),
            );
            return Err(Failure::Answer(
                status(tuned).unwrap_or(NONE_TUNED),
                format!(
                    "--write {}: `{}`: {why}; nothing is written",
                    to.display(),
                    t.name
                ),
            ));
        };
        changes.push((t.name.as_str(), &t.tried[r].change));
        settings.push(&t.tried[r].settings);
    }
    write::write(text, &changes, &settings, vars, to)?;
    Ok(to.display().to_string())
}

/// How sure the figures are, said once under every system.
fn legend(tuned: &[Tuned<'_>]) -> String {
    let unknown: usize = tuned.iter().map(|t| t.prepared.unknown()).sum();
    let holes = tuned.iter().any(|t| t.prepared.has_holes());
    if unknown == 0 && !holes {
        return "every figure exact: the recording has every call's outcome\n".to_owned();
    }
    let mut out = String::from(
        "≈: estimated from the answers guessed for calls the recording's guard refused; ?: the recording\n  cannot tell (--json says why)",
    );
    out.push_str("; every figure exact: record in observe mode (cb_mode = \"observe\")\n");
    out
}
