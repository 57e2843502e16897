//! `outbound-guard replay RECORDING`: a recorded day's calls through other settings.
//!
//! This file is the command: its arguments, files and output. The engine is the
//! `outbound_guard_replay` crate: each system's recording [`Prepared`] once, then
//! replayed through each setting asked for; [`render`] prints what it says, [`plot`]
//! draws it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufReader;
use std::path::PathBuf;
use std::time::Instant as WallInstant;

use outbound_guard_settings::{Loader, Settings};

use crate::compare;
use crate::failure::Failure;
use crate::load::vars;
use crate::output::{counted, print, warn};

mod plot;
mod render;

use crate::args::ReplayArgs;
use outbound_guard_replay::{Prepared, Recording, SystemRecording, SystemReport};
use render::preamble::Timing;
pub(crate) use render::wrap;

/// A replica's recording (`--replica`) and its path.
type ReplicaFile<'a> = (&'a PathBuf, Recording);

/// The longest recording replayed: a year, in microseconds.
const MAX_SPAN_MICROS: u64 = 366 * 86_400_000_000;

/// Runs `replay`.
pub(crate) fn run_command(args: &ReplayArgs) -> Result<(), Failure> {
    check_out(args)?;
    let read_started = WallInstant::now();
    let (mut recording, replicas) = read_inputs(args)?;
    let read_took = read_started.elapsed();
    let (text, origin) = settings_text(args, &recording)?;
    let variants = variants(args, &text, &origin)?;
    let names = systems(args, &recording)?;
    // The replicas' calls that ran answer this recording's calls without an outcome.
    let filled = fill_from_replicas(&mut recording, &replicas, &names);
    let mut missing = Vec::new();
    let mut reports = Vec::new();
    let replay_started = WallInstant::now();
    for name in &names {
        if variants[0].1.system(name).is_none() {
            missing.push(name.clone());
            continue;
        }
        let system = &recording.systems[name.as_str()];
        let mut report = replay_system(name, system, &variants, args.max_replays);
        report.filled = filled.get(name.as_str()).copied().unwrap_or(0);
        reports.push(report);
    }
    let replay_took = replay_started.elapsed();
    for name in &missing {
        warn(&format!(
            "outbound-guard: the recording's system `{name}` has no `[systems.{name}]` in {origin}: not replayed ({})",
            counted(recording.systems[name.as_str()].calls.len(), "call", "calls")
        ));
    }
    if reports.is_empty() {
        return Err(Failure::Usage(format!(
            "{origin} has a table for none of the recording's systems ({})",
            missing.join(", ")
        )));
    }
    if let Some(out) = &args.out {
        write_timelines(out, &recording, &reports, args.json)?;
    }
    let timing = Timing {
        read: read_took,
        replay: replay_took,
    };
    if args.json {
        print(&(render::to_json(&args.recording, &recording, &reports, &missing, timing) + "\n"))
    } else if args.detail {
        print(&render::to_detail(&args.recording, &recording, &reports))
    } else {
        print(&render::to_screen(&args.recording, &recording, &reports))
    }
}

/// `--out` names an SVG file.
fn check_out(args: &ReplayArgs) -> Result<(), Failure> {
    let Some(out) = &args.out else {
        return Ok(());
    };
    let svg = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if svg {
        Ok(())
    } else {
        Err(Failure::Usage(format!(
            "--out {}: the timeline is written as SVG only: name it FILE.svg",
            out.display()
        )))
    }
}

/// The recording and the replicas' (`--replica`), each line skipped warned of; an
/// error where the recording has no call or spans more than a year.
fn read_inputs(args: &ReplayArgs) -> Result<(Recording, Vec<ReplicaFile<'_>>), Failure> {
    let recording = read_recording(&args.recording, args.strict)?;
    let replicas = args
        .replica
        .iter()
        .map(|path| read_recording(path, args.strict).map(|r| (path, r)))
        .collect::<Result<Vec<_>, _>>()?;
    for (path, replica) in &replicas {
        if !replica.bad_lines.is_empty() {
            warn(&format!(
                "outbound-guard: {}: {} skipped (the first: line {}: {})",
                path.display(),
                counted(replica.bad_lines.len(), "line", "lines"),
                replica.bad_lines[0].0,
                replica.bad_lines[0].1
            ));
        }
    }
    for (line, why) in recording.bad_lines.iter().take(10) {
        warn(&format!(
            "outbound-guard: {}: line {line}: {why} (skipped)",
            args.recording.display()
        ));
    }
    if recording.bad_lines.len() > 10 {
        warn(&format!(
            "outbound-guard: … {} skipped in all",
            counted(recording.bad_lines.len(), "line", "lines")
        ));
    }
    if recording.systems.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: no call to replay ({} skipped)",
            args.recording.display(),
            counted(recording.bad_lines.len(), "line", "lines")
        )));
    }
    // tokio's timers reach about two years ahead; a recording spans days.
    let span = recording
        .systems
        .values()
        .filter_map(|s| s.calls.last().map(|c| c.start))
        .max()
        .unwrap_or(0);
    if span > MAX_SPAN_MICROS {
        return Err(Failure::Usage(format!(
            "{}: its calls span {} days, from line {} to line {}; at most {} (are some starts in seconds rather than milliseconds?)",
            args.recording.display(),
            span / 86_400_000_000,
            recording.first_line,
            recording.last_line,
            MAX_SPAN_MICROS / 86_400_000_000
        )));
    }
    Ok((recording, replicas))
}

/// The settings it ran with (`text` of `origin`, with `--env`'s overrides), then each
/// `--compare`'s, labelled.
fn variants(
    args: &ReplayArgs,
    text: &str,
    origin: &str,
) -> Result<Vec<(String, Settings)>, Failure> {
    let base_vars = vars(&args.env);
    let parse = |vars: Vec<(String, String)>| Loader::new().env(vars).parse(text, origin);
    let mut variants: Vec<(String, Settings)> =
        vec![("as set".to_owned(), parse(base_vars.clone())?)];
    for change in &args.compare {
        let (label, vars) = compare::vars(change, &variants[0].1, &base_vars)?;
        let settings = parse(vars)
            .map_err(|e| Failure::Usage(format!("--compare {change}: {}", e.message())))?;
        variants.push((label, settings));
    }
    Ok(variants)
}

/// The systems to replay: the recording's, or `--system`'s if it has it.
fn systems(args: &ReplayArgs, recording: &Recording) -> Result<Vec<String>, Failure> {
    recorded_systems(args.system.as_deref(), recording)
}

/// The recording's systems, or `only` if it has it (a usage error naming its systems if
/// not).
pub(crate) fn recorded_systems(
    only: Option<&str>,
    recording: &Recording,
) -> Result<Vec<String>, Failure> {
    let mut names: Vec<String> = recording.systems.keys().cloned().collect();
    if let Some(only) = only {
        names.retain(|n| n == only);
        if names.is_empty() {
            return Err(Failure::Usage(format!(
                "--system {only}: the recording has no call of it; its systems: {}",
                recording
                    .systems
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(names)
}

/// Answers the calls of `names` in `recording` without an outcome from the replicas'
/// calls that ran at the same moments: how many, per system.
fn fill_from_replicas(
    recording: &mut Recording,
    replicas: &[ReplicaFile<'_>],
    names: &[String],
) -> BTreeMap<String, usize> {
    let theirs: Vec<&Recording> = replicas.iter().map(|(_, r)| r).collect();
    names
        .iter()
        .map(|name| (name.clone(), recording.fill_from_replicas(name, &theirs)))
        .collect()
}

/// Each system's timeline into `out` (`out-NAME.svg` each where there are several).
fn write_timelines(
    out: &std::path::Path,
    recording: &Recording,
    reports: &[SystemReport<'_>],
    json: bool,
) -> Result<(), Failure> {
    for report in reports {
        let path = if reports.len() == 1 {
            out.to_path_buf()
        } else {
            let stem = out
                .file_stem()
                .map_or_else(|| "replay".to_owned(), |s| s.to_string_lossy().into_owned());
            out.with_file_name(format!("{stem}-{}.svg", report.name))
        };
        plot::timeline(&path, recording, report)
            .map_err(|e| Failure::Io(format!("cannot write {}: {e}", path.display())))?;
        if !json {
            warn(&format!("wrote {}", path.display()));
        }
    }
    Ok(())
}

/// One system's recording through each of `variants` (the first: the settings it ran
/// with).
fn replay_system<'a>(
    name: &str,
    system: &'a SystemRecording,
    variants: &[(String, Settings)],
    max_replays: Option<usize>,
) -> SystemReport<'a> {
    let mut prepared = Prepared::new(name, system, max_replays).with_draws(Prepared::DRAWS);
    let mut runs = Vec::new();
    for (label, settings) in variants {
        if let Some(s) = settings.system(name) {
            runs.push(if runs.is_empty() {
                prepared.ran_with(label, s)
            } else {
                prepared.variant(label, s)
            });
        }
    }
    prepared.report(runs)
}

/// `input`, read through a gzip decoder where it begins as gzip does (`1f 8b`).
fn gunzipped<'r>(
    input: impl std::io::BufRead + 'r,
) -> std::io::Result<Box<dyn std::io::BufRead + 'r>> {
    let mut input = input;
    let gzip = input.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(BufReader::with_capacity(
            1 << 20,
            flate2::bufread::MultiGzDecoder::new(input),
        ))
    } else {
        Box::new(input)
    })
}

/// The recording at `path` (`-`: stdin), gzipped or not.
pub(crate) fn read_recording(path: &std::path::Path, strict: bool) -> Result<Recording, Failure> {
    let result = if path.as_os_str() == "-" {
        gunzipped(std::io::stdin().lock())
            .map_err(|e| Failure::Io(format!("cannot read stdin: {e}")))
            .map(|input| Recording::read(input, strict))?
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| Failure::Io(format!("cannot read {}: {e}", path.display())))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(Failure::Io(format!(
                "cannot read {}: it is a directory; expected a recording (JSON lines), or - for stdin",
                path.display()
            )));
        }
        gunzipped(BufReader::with_capacity(1 << 20, file))
            .map_err(|e| Failure::Io(format!("cannot read {}: {e}", path.display())))
            .map(|input| Recording::read(input, strict))?
    };
    result.map_err(|e| Failure::Io(format!("{}: {e}", path.display())))
}

/// The settings file's text and name, or, without `--settings`, a table of the guide's
/// defaults for each of the recording's systems.
fn settings_text(args: &ReplayArgs, recording: &Recording) -> Result<(String, String), Failure> {
    if let Some(file) = &args.settings {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::Io(format!("cannot read {}: {e}", file.display())))?;
        return Ok((text, file.display().to_string()));
    }
    let text = recording
        .systems
        .keys()
        .fold(String::new(), |mut text, name| {
            let _ = writeln!(text, "[systems.{name}]");
            text
        });
    Ok((text, "the guide's defaults".to_owned()))
}
