//! `outbound-guard simulate`: each system's real guard against a scripted upstream, on
//! tokio's paused clock (nothing sleeps for real).
//!
//! One caller arrives every `--every` (100 ms) and runs one call under the guard. The
//! first `--warm` callers find a healthy upstream; from then on (the fault's start,
//! time 0 of every figure) the upstream misbehaves as the scenario says. Callers keep
//! arriving for `--duration` after the fault starts (recovery: after it ends).
//!
//! This module is the command: it checks the arguments and runs the scenarios through
//! [`engine`], then hands the figures to [`render`] (tables, JSON) and [`plot`] (SVG).

use std::collections::BTreeMap;
use std::time::Duration;

use outbound_guard_settings::{Settings, SystemSettings};

use crate::args::{ScenarioKind, SimulateArgs};
use crate::compare;
use crate::failure::Failure;
use crate::load::{load, vars};

pub(crate) mod engine;
mod plot;
mod queue;
mod queue_render;
mod render;

use engine::{run, Run, Script};
use render::{seconds, to_json, to_tables, Scenario};

/// The most callers one run may have.
const MAX_CALLERS: u128 = 200_000;

/// The most calls, served or refused, one `queue` run may make (a few seconds).
const QUEUE_MAX_CALLS: f64 = 5_000_000.0;

/// Runs `simulate`: every scenario asked for, for every system asked for, printed as
/// tables or JSON, with an SVG timeline per run when `--out` names a directory.
/// Refuses a rate, an interval or a run size a simulation cannot take.
fn check_script(args: &SimulateArgs) -> Result<(), Failure> {
    if !(args.rate > 0.0 && args.rate <= 1.0) {
        return Err(Failure::Usage(format!(
            "--rate {}: expected a share greater than 0 and at most 1, such as 0.6",
            args.rate
        )));
    }
    if args.every < Duration::from_millis(1) {
        return Err(Failure::Usage(format!(
            "--every {}: expected an interval between callers of at least 1ms, such as 100ms",
            seconds(args.every)
        )));
    }
    // Each caller is a task on the simulated clock: keep a run to a size that finishes
    // in seconds.
    let span = args.duration.checked_add(args.fault_for).and_then(|d| {
        args.every
            .checked_mul(args.warm)
            .and_then(|warm| d.checked_add(warm))
    });
    let callers = span.map_or(u128::MAX, |span| span.as_nanos() / args.every.as_nanos());
    if callers > MAX_CALLERS {
        return Err(Failure::Usage(format!(
            "{callers} callers per run (--warm, --duration and --fault-for at one caller every {}): at most {MAX_CALLERS}; shorten the run or space the callers out",
            seconds(args.every)
        )));
    }
    Ok(())
}

/// The systems to simulate: `--system`'s, or every one of the file.
fn systems_of<'s>(
    args: &SimulateArgs,
    settings: &'s Settings,
) -> Result<Vec<&'s SystemSettings>, Failure> {
    let systems: Vec<&SystemSettings> = match &args.system {
        Some(name) => vec![settings.system(name).ok_or_else(|| {
            Failure::Usage(format!(
                "--system {name}: {} has no `[systems.{name}]`; its systems: {}",
                settings.origin(),
                settings.names().collect::<Vec<_>>().join(", ")
            ))
        })?],
        None => settings.systems().collect(),
    };
    if systems.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: no `[systems.NAME]` table to simulate",
            settings.origin()
        )));
    }
    Ok(systems)
}

/// The pictures of one scenario: the settings as written, and each alternative beside
/// it in a picture of its own.
fn pictures(
    args: &SimulateArgs,
    dir: &std::path::Path,
    system: &SystemSettings,
    (kind, warm): (ScenarioKind, u32),
    runs: &[Run],
    labels: &[&str],
) -> Result<(), Failure> {
    let temperature = if warm == 0 { "cold" } else { "warm" };
    let path = dir.join(format!(
        "{}-{}-{temperature}.svg",
        system.name(),
        kind.name()
    ));
    let title = format!(
        "{}: {} ({temperature}{}), one caller every {}",
        system.name(),
        kind.name(),
        if warm == 0 {
            String::new()
        } else {
            format!(", {warm} successes first")
        },
        seconds(args.every)
    );
    plot::timeline(&path, &title, &runs[0].timeline)
        .map_err(|e| Failure::Io(format!("cannot write {}: {e}", path.display())))?;
    if !args.json {
        crate::output::warn(&format!("wrote {}", path.display()));
    }
    // Each alternative beside it, in a picture of its own.
    for (label, run) in labels.iter().zip(&runs[1..]) {
        let path = dir.join(format!(
            "{}-{}-{temperature}-with-{}.svg",
            system.name(),
            kind.name(),
            file_safe(label)
        ));
        plot::timeline(&path, &format!("{title}, with {label}"), &run.timeline)
            .map_err(|e| Failure::Io(format!("cannot write {}: {e}", path.display())))?;
        if !args.json {
            crate::output::warn(&format!("wrote {}", path.display()));
        }
    }
    Ok(())
}

pub(crate) fn run_command(args: &SimulateArgs) -> Result<(), Failure> {
    let settings = load(&args.file, &args.env, &[])?;
    check_script(args)?;
    let systems = systems_of(args, &settings)?;
    let compared = args
        .compare
        .iter()
        .map(|change| compare_settings(args, change, &settings))
        .collect::<Result<Vec<_>, _>>()?;
    if args.scenario == Some(ScenarioKind::Queue) {
        return queue_command(args, &systems, &compared);
    }
    let kinds: Vec<ScenarioKind> = match args.scenario {
        Some(kind) => vec![kind],
        None => vec![
            ScenarioKind::Hang,
            ScenarioKind::Errors,
            ScenarioKind::Slow,
            ScenarioKind::Recovery,
            ScenarioKind::RateLimited,
        ],
    };
    let warms: Vec<u32> = if args.warm == 0 {
        vec![0]
    } else {
        vec![0, args.warm]
    };
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Io(format!("--out {}: cannot create it: {e}", dir.display())))?;
    }

    let mut report = BTreeMap::new();
    for system in &systems {
        // The settings as written, then each alternative in the order given (every
        // alternative has every system: the same file, one key changed).
        let mut variants = vec![(*system).clone()];
        variants.extend(
            compared
                .iter()
                .filter_map(|(_, other)| other.system(system.name()).cloned()),
        );
        let mut outcomes = Vec::new();
        for &kind in &kinds {
            for &warm in &warms {
                let runs = variants
                    .iter()
                    .map(|s| run(s, &script(args, kind, warm, s)))
                    .collect::<Vec<_>>();
                if let Some(dir) = &args.out {
                    let labels: Vec<&str> = compared.iter().map(|(l, _)| l.as_str()).collect();
                    pictures(args, dir, system, (kind, warm), &runs, &labels)?;
                }
                outcomes.push(Scenario {
                    kind,
                    warm,
                    script: script(args, kind, warm, system),
                    runs,
                });
            }
        }
        report.insert(system.name().to_owned(), outcomes);
    }

    let labels: Vec<&str> = compared.iter().map(|(label, _)| label.as_str()).collect();
    if args.json {
        crate::output::print(&(to_json(args, &systems, &report, &labels) + "\n"))?;
    } else {
        crate::output::print(&to_tables(args, &systems, &report, &labels))?;
    }
    Ok(())
}

/// The `queue` scenario's upstream, its flags checked.
fn upstream_of(args: &SimulateArgs) -> Result<queue::Upstream, Failure> {
    let usage = |flag: &str, why: &str| Err(Failure::Usage(format!("{flag}: {why}")));
    if !(1..=1000).contains(&args.workers) {
        return usage(
            &format!("--workers {}", args.workers),
            "expected between 1 and 1000 workers",
        );
    }
    if args.degraded > args.workers {
        return usage(
            &format!("--degraded {}", args.degraded),
            &format!("expected at most --workers ({})", args.workers),
        );
    }
    if !(1..=1000).contains(&args.callers) {
        return usage(
            &format!("--callers {}", args.callers),
            "expected between 1 and 1000 callers",
        );
    }
    if args.service < Duration::from_millis(1) || args.service > Duration::from_secs(60) {
        return usage(
            &format!("--service {}", seconds(args.service)),
            "expected between 1ms and 60s, such as 100ms",
        );
    }
    let span = args.phase * 2 + args.fault_for;
    if args.phase.is_zero() || span > Duration::from_secs(3600) {
        return usage(
            &format!(
                "--phase {} and --fault-for {}",
                seconds(args.phase),
                seconds(args.fault_for)
            ),
            "expected a phase longer than 0 and a run of at most an hour",
        );
    }
    // The calls a run may make: each worker's, and each caller's refused every 10 ms.
    let calls = span.as_secs_f64()
        * (f64::from(args.workers) / args.service.as_secs_f64() + f64::from(args.callers) * 100.0);
    if calls > QUEUE_MAX_CALLS {
        return usage(
            &format!("about {calls:.0} calls per run (--workers, --service, --callers, --phase, --fault-for)"),
            &format!("at most {QUEUE_MAX_CALLS}; shorten the run or use fewer callers"),
        );
    }
    Ok(queue::Upstream {
        workers: args.workers,
        degraded: args.degraded,
        service: args.service,
        callers: args.callers,
        phase: args.phase,
        degraded_for: args.fault_for,
    })
}

/// The `queue` scenario for every system: the settings as written and each
/// alternative, in one table and one picture per system.
fn queue_command(
    args: &SimulateArgs,
    systems: &[&SystemSettings],
    compared: &[(String, Settings)],
) -> Result<(), Failure> {
    let upstream = upstream_of(args)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Io(format!("--out {}: cannot create it: {e}", dir.display())))?;
    }
    let (mut tables, mut json) = (Vec::new(), Vec::new());
    for system in systems {
        let mut variants = vec![("as written".to_owned(), (*system).clone())];
        variants.extend(compared.iter().filter_map(|(label, other)| {
            other
                .system(system.name())
                .map(|s| (label.clone(), s.clone()))
        }));
        let runs = variants
            .into_iter()
            .map(|(label, settings)| {
                let run = queue::run(&settings, &upstream);
                let phases = queue::phases(&upstream, &run);
                (label, run, phases)
            })
            .collect();
        let compared = queue_render::Compared {
            system: system.name(),
            upstream,
            runs,
        };
        if let Some(dir) = &args.out {
            let path = dir.join(format!("{}-queue.svg", system.name()));
            queue_render::picture(&path, &compared)
                .map_err(|e| Failure::Io(format!("cannot write {}: {e}", path.display())))?;
            if !args.json {
                crate::output::warn(&format!("wrote {}", path.display()));
            }
        }
        tables.push(queue_render::table(&compared));
        json.push(queue_render::to_json(&compared));
    }
    if args.json {
        let json = serde_json::json!({ "systems": json });
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        crate::output::print(&(text + "\n"))
    } else {
        crate::output::print(&tables.join("\n"))
    }
}

/// A comparison's label as part of a file name: `cb_failure_rate-0.3`.
fn file_safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn script(args: &SimulateArgs, kind: ScenarioKind, warm: u32, s: &SystemSettings) -> Script {
    Script {
        kind,
        warm,
        every: args.every,
        duration: args.duration,
        latency: args.latency,
        rate: args.rate,
        slow: args
            .slow
            .unwrap_or_else(|| (s.cb_slow_threshold() + s.total_timeout()) / 2),
        fault_for: args.fault_for,
        retry_after: args.retry_after,
    }
}

/// The settings with one key changed in every system, through the same overrides and
/// validation as `CLIENT_<SYSTEM>__<KEY>` at startup (replacing an override `--env` took
/// from the process for the same key).
fn compare_settings(
    args: &SimulateArgs,
    change: &str,
    settings: &Settings,
) -> Result<(String, Settings), Failure> {
    let (label, vars) = compare::vars(change, settings, &vars(&args.env))?;
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| Failure::Io(format!("cannot read {}: {e}", args.file.display())))?;
    let other = outbound_guard_settings::Loader::new()
        .env(vars)
        .parse(&text, settings.origin())
        .map_err(|e| Failure::Usage(format!("--compare {change}: {}", e.message())))?;
    Ok((label, other))
}
