//! `outbound-guard simulate`: each system's real [`Guard`] against a scripted upstream,
//! on tokio's paused clock (nothing sleeps for real).
//!
//! One caller arrives every `--every` (100 ms) and runs one call under the guard. The
//! first `--warm` callers find a healthy upstream; from then on (the fault's start,
//! time 0 of every figure) the upstream misbehaves as the scenario says. Callers keep
//! arriving for `--duration` after the fault starts (recovery: after it ends).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{Cause, Guard, Observer, State, Transition};
use outbound_guard_settings::{Key, Settings, SystemSettings};
use serde_json::json;
use tokio::time::{sleep, Instant};

use crate::{load, plot, seconds, Failure, ScenarioKind, SimulateArgs};

/// How the upstream behaves, and for how long the callers come.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    pub kind: ScenarioKind,
    /// Successful calls before the fault.
    pub warm: u32,
    pub every: Duration,
    pub duration: Duration,
    pub latency: Duration,
    /// `errors`: the share of answers that are errors.
    pub rate: f64,
    /// `slow`: how long an answer takes.
    pub slow: Duration,
    /// `recovery`: how long the hang lasts.
    pub fault_for: Duration,
}

impl Script {
    /// How long after the fault starts callers keep coming.
    fn run_for(&self) -> Duration {
        match self.kind {
            ScenarioKind::Recovery => self.fault_for + self.duration,
            _ => self.duration,
        }
    }
}

/// One caller's call: when it started and finished (relative to the fault's start),
/// and why it was refused, if it was.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Since the fault started (zero for a warm caller).
    started: Duration,
    took: Duration,
    /// When the caller was told, in seconds since the fault started (negative while warm).
    told: f64,
    /// Before the fault started (a warm caller).
    warm: bool,
    refused: Option<Cause>,
}

/// What a run measured. Times are since the fault started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// The first caller refused (by the breaker or the bulkhead), when it was told.
    pub first_refusal: Option<Duration>,
    /// The breaker's first transition to open.
    pub breaker_opened: Option<Duration>,
    /// The first caller refused without waiting at all.
    pub first_zero_wait_refusal: Option<Duration>,
    /// Upstream calls made from the fault's start to the first zero-wait refusal (all of
    /// them when there was none).
    pub upstream_calls_until_fast_fail: usize,
    /// Upstream calls made from the fault's start to the end of the run.
    pub upstream_calls: usize,
    /// Most callers inside `guard.call` at once (running or waiting for a permit).
    pub most_callers_alive: usize,
    /// Most upstream calls running at once.
    pub most_in_flight: usize,
    /// Callers refused (open, half-open full, bulkhead full) after the fault started.
    pub refused: usize,
    /// Callers after the fault started.
    pub callers: usize,
    /// `recovery`: from the fault's end to the breaker closed again.
    pub recovered_after: Option<Duration>,
    /// How many times the breaker opened (each open → half-open → open is one more).
    pub open_cycles: usize,
}

/// The timeline of a run, for the pictures: one sample per caller arrival, the
/// transitions, and each refusal and upstream call.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Seconds since the fault's start (negative while warm), callers alive, upstream
    /// calls in flight.
    pub samples: Vec<(f64, usize, usize)>,
    /// Seconds since the fault's start, and the state entered.
    pub transitions: Vec<(f64, State)>,
    /// When each refusal was told, in seconds since the fault's start.
    pub refusals: Vec<f64>,
    /// When each upstream call started, in seconds since the fault's start.
    pub upstream: Vec<f64>,
    /// The run's span, in seconds since the fault's start.
    pub start: f64,
    pub end: f64,
    /// `recovery`: when the fault ended.
    pub fault_end: Option<f64>,
}

/// One run's result.
#[derive(Debug, Clone)]
pub struct Run {
    pub figures: Figures,
    pub timeline: Timeline,
}

#[derive(Default)]
struct Transitions(Mutex<Vec<(State, State, Instant)>>);

impl Observer for Transitions {
    fn on_transition(&self, t: &Transition<'_>) {
        if let Ok(mut all) = self.0.lock() {
            all.push((t.from, t.to, t.at));
        }
    }
}

/// Counts up while alive, and records the most at once.
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Gauge {
    fn new() -> Arc<Gauge> {
        Arc::new(Gauge {
            now: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        })
    }

    fn enter(self: &Arc<Self>) -> Held {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        Held(self.clone())
    }

    fn get(&self) -> usize {
        self.now.load(Ordering::SeqCst)
    }
}

/// One unit of a [`Gauge`], given back when dropped (a call cut off by the timeout is
/// dropped too).
struct Held(Arc<Gauge>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the upstream does with one call.
enum Answer {
    Healthy,
    Hang,
    Error,
    Slow,
}

/// Runs one scenario against a fresh guard of `settings`, on its own paused runtime.
pub fn run(settings: &SystemSettings, script: &Script) -> Run {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with a paused clock builds");
    runtime.block_on(drive(settings, *script))
}

type Upstream = Pin<Box<dyn Future<Output = Result<(), ()>> + Send>>;

#[allow(clippy::too_many_lines)]
async fn drive(settings: &SystemSettings, script: Script) -> Run {
    let transitions = Arc::new(Transitions::default());
    let guard = Guard::with_observers(settings, vec![transitions.clone()]);
    let t0 = Instant::now();
    let fault_at = t0 + script.every * script.warm;
    let fault_end = (script.kind == ScenarioKind::Recovery).then(|| fault_at + script.fault_for);
    let end = fault_at + script.run_for();
    let alive = Gauge::new();
    let in_flight = Gauge::new();
    let upstream_starts = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let faulty_calls = Arc::new(AtomicUsize::new(0));

    let upstream = {
        let (in_flight, upstream_starts, faulty_calls) = (
            in_flight.clone(),
            upstream_starts.clone(),
            faulty_calls.clone(),
        );
        move || -> Upstream {
            let (in_flight, upstream_starts, faulty_calls) = (
                in_flight.clone(),
                upstream_starts.clone(),
                faulty_calls.clone(),
            );
            Box::pin(async move {
                let now = Instant::now();
                if let Ok(mut starts) = upstream_starts.lock() {
                    starts.push(now);
                }
                let _held = in_flight.enter();
                let faulty = now >= fault_at && fault_end.is_none_or(|end| now < end);
                let answer = if !faulty {
                    Answer::Healthy
                } else {
                    match script.kind {
                        ScenarioKind::Hang | ScenarioKind::Recovery => Answer::Hang,
                        ScenarioKind::Slow => Answer::Slow,
                        ScenarioKind::Errors => {
                            // Errors spread evenly: call i fails when the running share
                            // of failures crosses a whole number.
                            let i = faulty_calls.fetch_add(1, Ordering::SeqCst);
                            #[allow(clippy::cast_precision_loss)]
                            let (a, b) = (i as f64 * script.rate, (i + 1) as f64 * script.rate);
                            if b.floor() > a.floor() {
                                Answer::Error
                            } else {
                                Answer::Healthy
                            }
                        }
                    }
                };
                match answer {
                    Answer::Healthy => {
                        sleep(script.latency).await;
                        Ok(())
                    }
                    Answer::Error => {
                        sleep(script.latency).await;
                        Err(())
                    }
                    Answer::Slow => {
                        sleep(script.slow).await;
                        Ok(())
                    }
                    Answer::Hang => std::future::pending().await,
                }
            })
        }
    };

    let mut tasks = Vec::new();
    let mut samples = Vec::new();
    let since = |at: Instant| secs_between(fault_at, at);
    while Instant::now() < end {
        samples.push((since(Instant::now()), alive.get(), in_flight.get()));
        let (guard, upstream, alive) = (guard.clone(), upstream.clone(), alive.clone());
        tasks.push(tokio::spawn(async move {
            let _alive = alive.enter();
            let start = Instant::now();
            let result = guard.call(upstream()).await;
            let took = start.elapsed();
            Seen {
                started: start.saturating_duration_since(fault_at),
                told: secs_between(fault_at, start + took),
                took,
                warm: start < fault_at,
                refused: result
                    .err()
                    .map(|e| *e.cause())
                    .filter(|c| !matches!(c, Cause::Timeout { .. } | Cause::Slow { .. })),
            }
        }));
        sleep(script.every).await;
    }
    let mut seen = Vec::with_capacity(tasks.len());
    for task in tasks {
        if let Ok(s) = task.await {
            seen.push(s);
        }
    }
    // The last calls may end after the last arrival: sample the quiet end too.
    let last = Instant::now();
    samples.push((since(last), alive.get(), in_flight.get()));

    let transitions = transitions.0.lock().map(|t| t.clone()).unwrap_or_default();
    let starts = upstream_starts
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    let faulty: Vec<&Seen> = seen.iter().filter(|s| !s.warm).collect();
    let first_zero_wait = faulty
        .iter()
        .filter(|s| s.refused.is_some() && s.took.is_zero())
        .map(|s| s.started)
        .min();
    let after = |at: Instant| at.checked_duration_since(fault_at);
    let figures = Figures {
        first_refusal: faulty
            .iter()
            .filter(|s| s.refused.is_some())
            .map(|s| s.started + s.took)
            .min(),
        breaker_opened: transitions
            .iter()
            .filter(|(_, to, at)| *to == State::Open && *at >= fault_at)
            .find_map(|(_, _, at)| after(*at)),
        first_zero_wait_refusal: first_zero_wait,
        upstream_calls_until_fast_fail: starts
            .iter()
            .filter_map(|at| after(*at))
            .filter(|d| first_zero_wait.is_none_or(|first| *d <= first))
            .count(),
        upstream_calls: starts.iter().filter(|at| **at >= fault_at).count(),
        most_callers_alive: alive.most.load(Ordering::SeqCst),
        most_in_flight: in_flight.most.load(Ordering::SeqCst),
        refused: faulty.iter().filter(|s| s.refused.is_some()).count(),
        callers: faulty.len(),
        recovered_after: fault_end.and_then(|fault_end| {
            transitions
                .iter()
                .find(|(_, to, at)| *to == State::Closed && *at >= fault_end)
                .map(|(_, _, at)| *at - fault_end)
        }),
        open_cycles: transitions
            .iter()
            .filter(|(_, to, _)| *to == State::Open)
            .count(),
    };
    let timeline = Timeline {
        samples,
        transitions: transitions
            .iter()
            .map(|(_, to, at)| (since(*at), *to))
            .collect(),
        refusals: seen
            .iter()
            .filter(|s| s.refused.is_some())
            .map(|s| s.told)
            .collect(),
        upstream: starts.iter().map(|at| since(*at)).collect(),
        start: since(t0),
        end: since(last),
        fault_end: fault_end.map(since),
    };
    Run { figures, timeline }
}

/// Seconds from `from` to `to`, negative when `to` is earlier.
fn secs_between(from: Instant, to: Instant) -> f64 {
    if to >= from {
        (to - from).as_secs_f64()
    } else {
        -(from - to).as_secs_f64()
    }
}

/// The most callers one run may have.
const MAX_CALLERS: u128 = 200_000;

/// One scenario's figures for one system, with the settings as written and, when
/// comparing, with the changed key.
struct Outcome {
    kind: ScenarioKind,
    warm: u32,
    runs: Vec<Run>,
}

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
                outcomes.push(Outcome { kind, warm, runs });
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
    let mut vars: Vec<(String, String)> = crate::explain::vars(&args.env)
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

fn ms(d: Option<Duration>) -> serde_json::Value {
    d.map_or(serde_json::Value::Null, |d| {
        json!(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    })
}

fn figures_json(f: &Figures) -> serde_json::Value {
    json!({
        "first_refusal_ms": ms(f.first_refusal),
        "breaker_opened_ms": ms(f.breaker_opened),
        "first_zero_wait_refusal_ms": ms(f.first_zero_wait_refusal),
        "upstream_calls_until_fast_fail": f.upstream_calls_until_fast_fail,
        "upstream_calls": f.upstream_calls,
        "most_callers_alive": f.most_callers_alive,
        "most_in_flight": f.most_in_flight,
        "callers": f.callers,
        "refused": f.refused,
        "recovered_after_ms": ms(f.recovered_after),
        "open_cycles": f.open_cycles,
    })
}

fn to_json(
    args: &SimulateArgs,
    systems: &[&SystemSettings],
    report: &BTreeMap<String, Vec<Outcome>>,
    compared: Option<&str>,
) -> String {
    let systems: Vec<serde_json::Value> = systems
        .iter()
        .map(|system| {
            let outcomes = report.get(system.name()).map_or(&[][..], Vec::as_slice);
            let scenarios: Vec<serde_json::Value> = outcomes
                .iter()
                .map(|o| {
                    let s = script(args, o.kind, o.warm, system);
                    let mut value = json!({
                        "scenario": o.kind.name(),
                        "warm": o.warm,
                        "figures": figures_json(&o.runs[0].figures),
                    });
                    match o.kind {
                        ScenarioKind::Errors => value["rate"] = json!(s.rate),
                        ScenarioKind::Slow => value["slow_ms"] = ms(Some(s.slow)),
                        ScenarioKind::Recovery => value["fault_for_ms"] = ms(Some(s.fault_for)),
                        ScenarioKind::Hang => {}
                    }
                    if let (Some(label), Some(other)) = (compared, o.runs.get(1)) {
                        value["compared"] = json!({
                            "change": label,
                            "figures": figures_json(&other.figures),
                        });
                    }
                    value
                })
                .collect();
            json!({
                "system": system.name(),
                "bulkhead_permits": system.bulkhead_permits(),
                "scenarios": scenarios,
            })
        })
        .collect();
    let value = json!({
        "file": args.file.display().to_string(),
        "every_ms": ms(Some(args.every)),
        "duration_ms": ms(Some(args.duration)),
        "systems": systems,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

fn opt(d: Option<Duration>) -> String {
    d.map_or_else(|| "—".to_owned(), seconds)
}

/// The figures of one run as table cells, in the header's order.
fn cells(f: &Figures, kind: ScenarioKind) -> Vec<String> {
    vec![
        opt(f.first_refusal),
        opt(f.breaker_opened),
        opt(f.first_zero_wait_refusal),
        f.upstream_calls_until_fast_fail.to_string(),
        f.upstream_calls.to_string(),
        f.most_callers_alive.to_string(),
        if kind == ScenarioKind::Recovery {
            opt(f.recovered_after)
        } else {
            "n/a".to_owned()
        },
        f.open_cycles.to_string(),
    ]
}

const HEADER: [&str; 8] = [
    "first refusal",
    "opened",
    "fast-fail",
    "calls to ff",
    "calls",
    "most alive",
    "recovered",
    "opens",
];

fn to_tables(
    args: &SimulateArgs,
    systems: &[&SystemSettings],
    report: &BTreeMap<String, Vec<Outcome>>,
    compared: Option<&str>,
) -> String {
    let mut out = String::new();
    for (index, system) in systems.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{}: {} permits (bulkhead_wait {}), breaker opens at {}% of ≥ {} calls in {}, slow after {}, timeout {}, open for {}",
            system.name(),
            system.bulkhead_permits(),
            seconds(system.bulkhead_wait()),
            percent(system.cb_failure_rate()),
            system.cb_min_calls(),
            system.cb_window_size(),
            seconds(system.cb_slow_threshold()),
            seconds(system.total_timeout()),
            seconds(system.cb_open_duration()),
        );
        let _ = writeln!(
            out,
            "  one caller every {}; times since the fault started; — never",
            seconds(args.every)
        );
        let mut rows = vec![{
            let mut header = vec!["scenario".to_owned()];
            header.extend(HEADER.iter().map(|h| (*h).to_owned()));
            header
        }];
        for o in report.get(system.name()).map_or(&[][..], Vec::as_slice) {
            let name = scenario_name(args, o, system);
            let mut row = vec![name.clone()];
            row.extend(cells(&o.runs[0].figures, o.kind));
            rows.push(row);
            if let (Some(label), Some(other)) = (compared, o.runs.get(1)) {
                let mut row = vec![format!("  with {label}")];
                row.extend(cells(&other.figures, o.kind));
                rows.push(row);
            }
        }
        out.push_str(&table(&rows));
    }
    out
}

fn scenario_name(args: &SimulateArgs, o: &Outcome, system: &SystemSettings) -> String {
    let s = script(args, o.kind, o.warm, system);
    let what = match o.kind {
        ScenarioKind::Hang => "hang".to_owned(),
        ScenarioKind::Errors => format!("errors {}%", percent(s.rate)),
        ScenarioKind::Slow => format!("slow {}", seconds(s.slow)),
        ScenarioKind::Recovery => format!("recovery after {}", seconds(s.fault_for)),
    };
    if o.warm == 0 {
        format!("{what}, cold")
    } else {
        format!("{what}, warm {}", o.warm)
    }
}

/// A share as a percentage, to two decimals at most: `60`, `0.01`.
fn percent(rate: f64) -> String {
    let text = format!("{:.2}", rate * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Rows as aligned columns: the first left-aligned, the others right-aligned.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        out.push_str("  ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c == 0 {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str("  ");
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_show_as_percentages() {
        assert_eq!(percent(0.6), "60");
        assert_eq!(percent(0.3), "30");
        assert_eq!(percent(0.125), "12.5");
        assert_eq!(percent(0.0001), "0.01");
        assert_eq!(percent(1.0), "100");
    }

    #[test]
    fn tables_align_their_columns() {
        let rows = vec![
            vec!["a".to_owned(), "1".to_owned()],
            vec!["long name".to_owned(), "100".to_owned()],
        ];
        assert_eq!(table(&rows), "  a            1\n  long name  100\n");
    }
}
