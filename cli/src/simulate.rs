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

use outbound_guard_settings::{Key, Settings, SystemSettings};

use crate::args::SimulateArgs;
use crate::failure::Failure;
use crate::load::{load, vars};

pub(crate) mod engine;
mod plot;
mod render;

use engine::{run, ScenarioKind, Script};
use render::{seconds, to_json, to_tables, Outcome};

/// The most callers one run may have.
const MAX_CALLERS: u128 = 200_000;

/// Runs `simulate`: every scenario asked for, for every system asked for, printed as
/// tables or JSON, with an SVG timeline per run when `--out` names a directory.
pub(crate) fn run_command(args: &SimulateArgs) -> Result<(), Failure> {
    let settings = load(&args.file, &args.env, &[])?;
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
    let compared = match &args.compare {
        Some(change) => Some(compare_settings(args, change, &settings)?),
        None => None,
    };
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
        let mut variants = vec![(*system).clone()];
        if let Some((_, other)) = &compared {
            if let Some(other) = other.system(system.name()) {
                variants.push(other.clone());
            }
        }
        let mut outcomes = Vec::new();
        for &kind in &kinds {
            for &warm in &warms {
                let runs = variants
                    .iter()
                    .map(|s| run(s, &script(args, kind, warm, s)))
                    .collect::<Vec<_>>();
                if let Some(dir) = &args.out {
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
                    plot::timeline(&path, &title, &runs[0].timeline).map_err(|e| {
                        Failure::Io(format!("cannot write {}: {e}", path.display()))
                    })?;
                    if !args.json {
                        eprintln!("wrote {}", path.display());
                    }
                }
                outcomes.push(Outcome {
                    kind,
                    warm,
                    script: script(args, kind, warm, system),
                    runs,
                });
            }
        }
        report.insert(system.name().to_owned(), outcomes);
    }

    let label = compared.as_ref().map(|(label, _)| label.as_str());
    if args.json {
        println!("{}", to_json(args, &systems, &report, label));
    } else {
        print!("{}", to_tables(args, &systems, &report, label));
    }
    Ok(())
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
/// validation as `CLIENT_<SYSTEM>__<KEY>` at startup.
fn compare_settings(
    args: &SimulateArgs,
    change: &str,
    settings: &Settings,
) -> Result<(String, Settings), Failure> {
    let keys = || {
        outbound_guard_settings::KEYS
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some((key, value)) = change.split_once('=') else {
        return Err(Failure::Usage(format!(
            "--compare {change:?}: expected KEY=VALUE, such as cb_failure_rate=0.3"
        )));
    };
    let (key, value) = (key.trim(), value.trim());
    let Some(key) = Key::from_name(key) else {
        return Err(Failure::Usage(format!(
            "--compare {change:?}: no key `{key}`; allowed keys: {}",
            keys()
        )));
    };
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| Failure::Io(format!("cannot read {}: {e}", args.file.display())))?;
    let changed: Vec<(String, String)> = settings
        .names()
        .map(|name| {
            (
                outbound_guard_settings::env_var(name, key),
                value.to_owned(),
            )
        })
        .collect();
    // The change replaces an override `--env` took from the process for the same key.
    let mut vars: Vec<(String, String)> = vars(&args.env)
        .into_iter()
        .filter(|(name, _)| !changed.iter().any(|(c, _)| c == name))
        .collect();
    vars.extend(changed);
    let other = outbound_guard_settings::Loader::new()
        .env(vars)
        .parse(&text, settings.origin())
        .map_err(|e| Failure::Usage(format!("--compare {change}: {}", e.message())))?;
    Ok((format!("{}={value}", key.name()), other))
}
