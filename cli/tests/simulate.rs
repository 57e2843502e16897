//! `outbound-guard simulate`, run as a binary: its figures agree with the runtime's own
//! paused-time drive of the same scenario, its pictures are written, and a comparison
//! runs both settings.
//!
//! The agreement test replays `runtime/tests/fast_fail.rs`'s
//! `a_hang_under_the_guides_defaults_fails_fast_near_the_slow_threshold` (the guide's
//! defaults, a cold hang, one caller every 100 ms for 90 s) through the library, and
//! derives the expected figures from that run rather than from numbers written here, so
//! a change to the breaker's rules moves both sides together.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{Cause, Guard, Observer, Settings, State, Transition};
use tokio::time::{sleep, Instant};

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);

mod common;
use assert_cmd::Command;
use common::{bin, DEMO};

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("sim-{name}"))
}

fn json(command: &mut Command) -> serde_json::Value {
    let output = command.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

// ---- The runtime test's drive, as `runtime/tests/fast_fail.rs` writes it. ----

#[derive(Default)]
struct Transitions(Mutex<Vec<(State, State, Instant)>>);

impl Observer for Transitions {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.from, t.to, t.at));
    }
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    started: Duration,
    took: Duration,
    refused: Option<Cause>,
}

async fn drive<F, Fut>(guard: &Guard, every: Duration, run: Duration, upstream: F) -> Vec<Seen>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), ()>> + Send + 'static,
{
    let upstream = Arc::new(upstream);
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    while t0.elapsed() < run {
        let (guard, upstream) = (guard.clone(), upstream.clone());
        tasks.push(tokio::spawn(async move {
            let start = Instant::now();
            let result = guard.call(upstream()).await;
            Seen {
                started: start - t0,
                took: start.elapsed(),
                refused: result
                    .err()
                    .map(|e| *e.cause())
                    .filter(|c| !matches!(c, Cause::Timeout { .. } | Cause::Slow { .. })),
            }
        }));
        sleep(every).await;
    }
    let mut seen = Vec::new();
    for task in tasks {
        seen.push(task.await.unwrap());
    }
    seen
}

/// What the runtime's drive measures for a hang under `text`'s `sber`.
struct Expected {
    first_zero_wait: Duration,
    opened: Duration,
    reached: usize,
    permits: usize,
    min_calls: usize,
    bound: Duration,
}

/// The runtime's own drive of a hang after `warm` successful calls one every `every`
/// (a window of successes, as a service that was healthy until now; 0: a cold start):
/// times from the end of the warm-up.
#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn runtime_warm_hang(text: &str, warm: usize, every: Duration, run: Duration) -> Expected {
    let settings = Settings::parse(text, "inline").unwrap();
    let settings = settings.system("sber").unwrap();
    let transitions = Arc::new(Transitions::default());
    let guard = Guard::builder(settings)
        .observer(transitions.clone())
        .build();
    for _ in 0..warm {
        assert_eq!(guard.call(async { Ok::<_, ()>(()) }).await, Ok(Ok(())));
        sleep(every).await;
    }
    let reached = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let seen = drive(&guard, every, run, {
        let reached = reached.clone();
        move || {
            let reached = reached.clone();
            async move {
                reached.fetch_add(1, Ordering::SeqCst);
                std::future::pending().await
            }
        }
    })
    .await;
    let first_zero_wait = seen
        .iter()
        .filter(|s| s.refused.is_some() && s.took.is_zero())
        .map(|s| s.started)
        .min()
        .expect("callers are turned away at once");
    let opened = transitions
        .0
        .lock()
        .unwrap()
        .iter()
        .find(|(_, to, _)| *to == State::Open)
        .map(|(_, _, at)| *at - t0)
        .expect("the breaker opens");
    Expected {
        first_zero_wait,
        opened,
        reached: reached.load(Ordering::SeqCst),
        permits: guard.bulkhead_permits(),
        min_calls: settings.cb_min_calls() as usize,
        bound: settings.cb_slow_threshold() + settings.bulkhead_wait() + S,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap()
}

#[test]
fn a_cold_hang_under_the_guides_defaults_agrees_with_the_runtimes_own_drive() {
    let text = "[systems.sber]\n";
    let path = scratch("agree").join("resilience.toml");
    std::fs::write(&path, text).unwrap();
    let expected = runtime_warm_hang(text, 0, 100 * MS, 90 * S);

    let report = json(bin().args([
        "simulate".as_ref(),
        path.as_os_str(),
        "--scenario".as_ref(),
        "hang".as_ref(),
        "--warm".as_ref(),
        "0".as_ref(),
        "--every".as_ref(),
        "100ms".as_ref(),
        "--duration".as_ref(),
        "90s".as_ref(),
        "--json".as_ref(),
    ]));
    let scenarios = report["systems"][0]["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 1, "{report:#}");
    assert_eq!(scenarios[0]["scenario"], "hang");
    assert_eq!(scenarios[0]["warm"], 0);
    let figures = &scenarios[0]["figures"];
    assert_eq!(report["systems"][0]["bulkhead_permits"], expected.permits);

    // The same figures as the runtime's drive…
    assert_eq!(
        figures["first_zero_wait_refusal_ms"],
        millis(expected.first_zero_wait),
        "{figures:#}"
    );
    assert_eq!(
        figures["breaker_opened_ms"],
        millis(expected.opened),
        "{figures:#}"
    );
    assert_eq!(figures["upstream_calls"], expected.reached, "{figures:#}");
    // …and the bounds the runtime test asserts on them.
    let first = Duration::from_millis(figures["first_zero_wait_refusal_ms"].as_u64().unwrap());
    assert!(first <= expected.bound, "{first:?} > {:?}", expected.bound);
    let reached = figures["upstream_calls"].as_u64().unwrap();
    assert!(reached <= (expected.permits + expected.min_calls) as u64);
    assert!(figures["upstream_calls_until_fast_fail"].as_u64().unwrap() <= reached);
    assert!(figures["first_refusal_ms"].as_u64().unwrap() <= millis(first));
    assert!(figures["open_cycles"].as_u64().unwrap() >= 1);
    assert_eq!(figures["recovered_after_ms"], serde_json::Value::Null);
}

#[test]
fn other_settings_agree_too() {
    // A smaller bulkhead and a shorter slow threshold: the figures still come from the
    // same code, whatever they are.
    let text = "[systems.sber]\nmax_connections = 4\nread_timeout = 8\ntotal_timeout = 10\ncb_min_calls = 5\n";
    let path = scratch("agree-other").join("resilience.toml");
    std::fs::write(&path, text).unwrap();
    let expected = runtime_warm_hang(text, 0, 250 * MS, 40 * S);
    let report = json(bin().args([
        "simulate".as_ref(),
        path.as_os_str(),
        "--scenario".as_ref(),
        "hang".as_ref(),
        "--warm".as_ref(),
        "0".as_ref(),
        "--every".as_ref(),
        "250ms".as_ref(),
        "--duration".as_ref(),
        "40s".as_ref(),
        "--json".as_ref(),
    ]));
    let figures = &report["systems"][0]["scenarios"][0]["figures"];
    assert_eq!(
        figures["first_zero_wait_refusal_ms"],
        millis(expected.first_zero_wait)
    );
    assert_eq!(figures["breaker_opened_ms"], millis(expected.opened));
    assert_eq!(figures["upstream_calls"], expected.reached);
}

#[test]
fn every_scenario_cold_and_warm_with_pictures_and_a_comparison() {
    let out = scratch("pictures");
    let report = json(bin().args([
        "simulate".as_ref(),
        DEMO.as_ref(),
        "--system".as_ref(),
        "customer".as_ref(),
        "--compare".as_ref(),
        "cb_failure_rate=0.3".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
    ]));
    let systems = report["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 1);
    assert_eq!(systems[0]["system"], "customer");
    let scenarios = systems[0]["scenarios"].as_array().unwrap();
    let names: Vec<String> = scenarios
        .iter()
        .map(|s| format!("{}-{}", s["scenario"].as_str().unwrap(), s["warm"]))
        .collect();
    assert_eq!(
        names,
        [
            "hang-0",
            "hang-60",
            "errors-0",
            "errors-60",
            "slow-0",
            "slow-60",
            "recovery-0",
            "recovery-60",
            "429-0",
            "429-60"
        ]
    );
    for s in scenarios {
        let f = &s["figures"];
        assert!(f["breaker_opened_ms"].is_u64(), "{s:#}");
        assert!(f["first_zero_wait_refusal_ms"].is_u64(), "{s:#}");
        assert_eq!(s["compared"]["change"], "cb_failure_rate=0.3");
        assert!(
            s["compared"]["figures"]["breaker_opened_ms"].is_u64(),
            "{s:#}"
        );
    }
    // The recovery scenario closes again once the fault is over.
    let recovery = scenarios
        .iter()
        .find(|s| s["scenario"] == "recovery")
        .unwrap();
    assert!(
        recovery["figures"]["recovered_after_ms"].is_u64(),
        "{recovery:#}"
    );
    // Warm, 50 % needs at least as many failures in the window as 30 %: it opens no
    // earlier.
    let hang_warm = &scenarios[1];
    assert!(
        hang_warm["figures"]["breaker_opened_ms"].as_u64()
            >= hang_warm["compared"]["figures"]["breaker_opened_ms"].as_u64(),
        "{hang_warm:#}"
    );
    for name in [
        "customer-hang-cold.svg",
        "customer-hang-warm.svg",
        "customer-errors-cold.svg",
        "customer-slow-warm.svg",
        "customer-recovery-warm.svg",
    ] {
        let svg = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(svg.contains("breaker open"), "{name}: a state band");
        assert!(svg.contains("refusals / s"), "{name}");
    }
}

#[test]
fn tables_name_each_scenario_and_the_comparison() {
    bin()
        .args([
            "simulate",
            DEMO,
            "--system",
            "sber",
            "--scenario",
            "hang",
            "--compare",
            "cb_failure_rate=0.5",
        ])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("hang, cold"))
        .stdout(predicates::str::contains("hang, warm 60"))
        .stdout(predicates::str::contains("with cb_failure_rate=0.5"))
        .stdout(predicates::str::contains("sber: 8 permits"));
}

#[test]
fn several_comparisons_run_side_by_side_in_the_order_given() {
    let out = scratch("several");
    let args = |json: bool| {
        let mut args = vec![
            "simulate".to_owned(),
            DEMO.to_owned(),
            "--system".to_owned(),
            "sber".to_owned(),
            "--scenario".to_owned(),
            "errors".to_owned(),
            "--compare".to_owned(),
            "cb_failure_rate=0.5".to_owned(),
            "--compare".to_owned(),
            "cb_min_calls=20".to_owned(),
        ];
        if json {
            args.extend(["--json".to_owned(), "--out".to_owned()]);
            args.push(out.display().to_string());
        }
        args
    };
    let report = json(bin().args(args(true)));
    let scenarios = report["systems"][0]["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2, "cold and warm: {report:#}");
    for s in scenarios {
        let compared = s["compared"].as_array().expect("several: an array");
        let changes: Vec<&str> = compared
            .iter()
            .map(|c| c["change"].as_str().unwrap())
            .collect();
        assert_eq!(changes, ["cb_failure_rate=0.5", "cb_min_calls=20"], "{s:#}");
    }
    // Cold, the window fills at cb_min_calls and 60 % errors open either rate: twice
    // the minimum is twice the calls before the breaker opens.
    let cold = &scenarios[0];
    let calls = |f: &serde_json::Value| f["upstream_calls_until_fast_fail"].as_u64().unwrap();
    assert_eq!(calls(&cold["figures"]), 10, "{cold:#}");
    assert_eq!(calls(&cold["compared"][0]["figures"]), 10, "{cold:#}");
    assert_eq!(calls(&cold["compared"][1]["figures"]), 20, "{cold:#}");
    // Each alternative has its picture beside the settings' own.
    for name in [
        "sber-errors-cold.svg",
        "sber-errors-cold-with-cb_failure_rate-0.5.svg",
        "sber-errors-warm-with-cb_min_calls-20.svg",
    ] {
        let svg = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(svg.contains("breaker open"), "{name}");
    }
    let svg =
        std::fs::read_to_string(out.join("sber-errors-warm-with-cb_min_calls-20.svg")).unwrap();
    assert!(
        svg.contains("with cb_min_calls=20"),
        "the title names the change"
    );

    // The table: one row per alternative under each scenario, in the order given.
    let output = bin().args(args(false)).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("errors") || l.trim_start().starts_with("with"))
        .map(|l| l.split("  ").find(|c| !c.is_empty()).unwrap().trim())
        .collect();
    assert_eq!(
        rows,
        [
            "errors 60%, cold",
            "with cb_failure_rate=0.5",
            "with cb_min_calls=20",
            "errors 60%, warm 60",
            "with cb_failure_rate=0.5",
            "with cb_min_calls=20"
        ],
        "{text}"
    );
}

#[test]
fn one_comparison_is_an_object_as_before() {
    let report = json(bin().args([
        "simulate",
        DEMO,
        "--system",
        "sber",
        "--scenario",
        "hang",
        "--warm",
        "0",
        "--compare",
        "cb_failure_rate=0.5",
        "--json",
    ]));
    let compared = &report["systems"][0]["scenarios"][0]["compared"];
    assert_eq!(compared["change"], "cb_failure_rate=0.5", "{report:#}");
    assert!(compared["figures"].is_object(), "{report:#}");
}

#[test]
fn a_warm_hang_agrees_with_the_runtimes_drive_after_a_warm_up() {
    // Successes that answer at once, as the runtime's warm-up calls do.
    let text = "[systems.sber]\n";
    let path = scratch("agree-warm").join("resilience.toml");
    std::fs::write(&path, text).unwrap();
    let expected = runtime_warm_hang(text, 60, 100 * MS, 60 * S);
    let report = json(bin().args([
        "simulate".as_ref(),
        path.as_os_str(),
        "--scenario".as_ref(),
        "hang".as_ref(),
        "--warm".as_ref(),
        "60".as_ref(),
        "--latency".as_ref(),
        "0".as_ref(),
        "--duration".as_ref(),
        "60s".as_ref(),
        "--json".as_ref(),
    ]));
    let scenarios = report["systems"][0]["scenarios"].as_array().unwrap();
    let warm = scenarios
        .iter()
        .find(|s| s["warm"] == 60)
        .expect("a warm run");
    let figures = &warm["figures"];
    assert_eq!(
        figures["first_zero_wait_refusal_ms"],
        millis(expected.first_zero_wait),
        "{figures:#}"
    );
    assert_eq!(
        figures["breaker_opened_ms"],
        millis(expected.opened),
        "{figures:#}"
    );
    assert_eq!(figures["upstream_calls"], expected.reached, "{figures:#}");
}

/// The upstream answers 429 with `Retry-After: 120`: every opening lasts the 120 s it
/// asked, not `cb_open_duration`'s 30 s, so over ten minutes one trial call goes out per
/// two minutes.
#[test]
fn an_upstream_answering_429_with_retry_after_keeps_the_breaker_open_as_asked() {
    let report = json(bin().args([
        "simulate",
        DEMO,
        "--system",
        "customer",
        "--scenario",
        "429",
        "--warm",
        "0",
        "--duration",
        "10m",
        "--retry-after",
        "120s",
        "--json",
    ]));
    let scenario = &report["systems"][0]["scenarios"][0];
    assert_eq!(scenario["scenario"], "429");
    assert_eq!(scenario["retry_after_ms"], 120_000);
    let f = &scenario["figures"];
    let periods = f["open_periods_ms"].as_array().unwrap();
    assert!(!periods.is_empty(), "{f:#}");
    assert!(periods.iter().all(|p| p == 120_000), "{f:#}");
    assert_eq!(f["open_cycles"], 5, "{f:#}");
    assert_eq!(f["trial_calls"], 4, "{f:#}");
}

/// A one-hour outage whose upstream fails every call at once: without backoff the
/// breaker re-opens every 30 s (one trial each time, since the first trial's failure
/// re-opens it); with `cb_open_backoff = 2` it waits 30, 60, 120, 240 s, then the 5 min
/// cap.
#[test]
fn backoff_cuts_the_trial_calls_of_a_one_hour_outage() {
    let report = json(bin().args([
        "simulate",
        DEMO,
        "--system",
        "customer",
        "--scenario",
        "errors",
        "--rate",
        "1",
        "--warm",
        "0",
        "--duration",
        "1h",
        "--compare",
        "cb_open_backoff=2",
        "--json",
    ]));
    let scenario = &report["systems"][0]["scenarios"][0];
    let fixed = &scenario["figures"];
    let backed_off = &scenario["compared"]["figures"];
    assert_eq!(fixed["trial_calls"], 119, "{fixed:#}");
    assert_eq!(backed_off["trial_calls"], 14, "{backed_off:#}");
    let periods: Vec<u64> = backed_off["open_periods_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap() / 1000)
        .collect();
    assert_eq!(periods[..6], [30, 60, 120, 240, 300, 300]);
}

/// `cb_mode = "observe"` is simulated as `auto`: the question is what the breaker would
/// refuse, and an observing one refuses nothing.
#[test]
fn observe_mode_is_simulated_as_the_breaker_it_would_be() {
    let run = |mode: &str| {
        let text = format!("[systems.sber]\ncb_min_calls = 5\ncb_mode = \"{mode}\"\n");
        let path = scratch(&format!("observe-{mode}")).join("resilience.toml");
        std::fs::write(&path, text).unwrap();
        let report = json(bin().args([
            "simulate".as_ref(),
            path.as_os_str(),
            "--scenario".as_ref(),
            "hang".as_ref(),
            "--warm".as_ref(),
            "0".as_ref(),
            "--every".as_ref(),
            "250ms".as_ref(),
            "--duration".as_ref(),
            "40s".as_ref(),
            "--json".as_ref(),
        ]));
        report["systems"][0]["scenarios"][0]["figures"].clone()
    };
    let (observe, auto) = (run("observe"), run("auto"));
    assert!(
        auto["breaker_opened_ms"].is_number(),
        "{auto}: the hang opens it"
    );
    assert_eq!(observe, auto);
}

/// The `queue` scenario's settings: the benchmark's (`benches/examples/adaptive.rs`),
/// the guide's defaults but `read_timeout = "600ms"`.
const QUEUE_SETTINGS: &str =
    "[systems.sber]\nconnect_timeout = \"300ms\"\nread_timeout = \"600ms\"\n";

/// `simulate --scenario queue` as `docs/adaptive-bulkhead.md` runs it: 8 workers of
/// 100 ms, 2 for 40 s, 32 callers, fixed against adaptive.
fn queue_run(out: &std::path::Path, json: bool) -> std::process::Output {
    let settings = out.join("resilience.toml");
    std::fs::write(&settings, QUEUE_SETTINGS).unwrap();
    let mut command = bin();
    command
        .arg("simulate")
        .arg(&settings)
        .args(["--scenario", "queue", "--fault-for", "40s"])
        .args(["--compare", "bulkhead=adaptive", "--out"])
        .arg(out);
    if json {
        command.arg("--json");
    }
    command.output().unwrap()
}

/// The metastable failure the fixed bulkhead falls into, and the adaptive one keeping
/// the upstream's capacity in every phase, the table the docs show.
#[test]
fn a_queueing_upstream_fixed_against_adaptive_in_one_table() {
    let out = scratch("queue-table");
    let output = queue_run(&out, false);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8(output.stdout).unwrap();
    expect_test::expect![[r"
        sber: queue, 8 workers of 100 ms behind a queue, 2 for 40.0 s after 20.0 s, 32 callers

        | settings | phase | capacity | goodput | p50 / p99 admitted | p50 / p99 from the caller's start | bulkhead full | breaker refused | timeouts | openings | limit | settled |
        |---|---|---|---|---|---|---|---|---|---|---|---|
        | as written | 8 workers | 80/s | 79.6/s (99%) | 100 / 100 ms | 300 / 390 ms | 400 | 0 | 0 | 0 | 8 | 0 s |
        | as written | 2 workers | 20/s | 1.5/s (7%) | 400 / 400 ms | 600 / 690 ms | 98 | 121958 | 0 | 2 | 8 | 0 s |
        | as written | 8 workers again | 80/s | 0.0/s (0%) | – | – | 0 | 64000 | 0 | 0 | 8 | never |
        | bulkhead=adaptive | 8 workers | 80/s | 77.5/s (97%) | 100 / 100 ms | 300 / 390 ms | 434 | 0 | 0 | 0 | 2–8 | 1 s |
        | bulkhead=adaptive | 2 workers | 20/s | 20.1/s (101%) | 100 / 200 ms | 390 / 490 ms | 3112 | 0 | 0 | 0 | 2–8 | 0 s |
        | bulkhead=adaptive | 8 workers again | 80/s | 74.7/s (93%) | 100 / 100 ms | 300 / 390 ms | 493 | 0 | 0 | 0 | 2–8 | 3 s |

        goodput: successful calls a second; admitted: from the bulkhead's permit to the answer; settled: seconds into the phase until one served 90% of the capacity
    "]]
    .assert_eq(&table);
    // The docs show this very table.
    let docs =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/adaptive-bulkhead.md");
    let docs = std::fs::read_to_string(docs).unwrap();
    for row in table.lines().filter(|l| l.starts_with('|')) {
        assert!(docs.contains(row), "docs/adaptive-bulkhead.md lacks {row}");
    }
    let svg = std::fs::read_to_string(out.join("sber-queue.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    for text in [
        "the upstream",
        "bulkhead=adaptive",
        "as written",
        "bulkhead limit",
    ] {
        assert!(svg.contains(text), "{text}");
    }
}

/// The figures behind the table, as JSON: with the fixed bulkhead the breaker opens on
/// the slow calls of its own queueing, goodput collapses and stays at none after the
/// capacity is back; with the adaptive one no opening, goodput within 10% of the
/// capacity in every phase, and the limit down to the two workers' worth.
#[test]
fn the_adaptive_limit_keeps_the_capacity_where_the_fixed_one_opens() {
    let out = scratch("queue-json");
    let output = queue_run(&out, true);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let system = &report["systems"][0];
    assert_eq!(system["system"], "sber");
    let runs = system["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let share = |p: &serde_json::Value| {
        p["goodput_per_s"].as_f64().unwrap() / p["capacity_per_s"].as_f64().unwrap()
    };
    let (fixed, adaptive) = (&runs[0]["phases"], &runs[1]["phases"]);
    assert_eq!(runs[0]["settings"], "as written");
    assert!(share(&fixed[0]) > 0.9, "{fixed:#}");
    assert!(share(&fixed[1]) < 0.25, "{fixed:#}");
    assert!(fixed[1]["openings"].as_u64().unwrap() >= 1, "{fixed:#}");
    assert!(share(&fixed[2]) < 0.1, "{fixed:#}");
    assert_eq!(runs[1]["settings"], "bulkhead=adaptive");
    for phase in adaptive.as_array().unwrap() {
        assert!(share(phase) >= 0.9, "{phase:#}");
        assert_eq!(phase["openings"], 0, "{phase:#}");
        assert_eq!(phase["timeouts"], 0, "{phase:#}");
    }
    assert!(
        adaptive[1]["limit_low"].as_u64().unwrap() <= 3,
        "{adaptive:#}"
    );
    // Healthy, once admitted, at the upstream's unloaded latency.
    assert!(
        adaptive[2]["admitted_p99_ms"].as_f64().unwrap() <= 200.0,
        "{adaptive:#}"
    );
}

/// The upstream's flags are checked, each named with what it allows.
#[test]
fn the_queue_scenarios_flags_are_checked() {
    let out = scratch("queue-flags");
    let settings = out.join("resilience.toml");
    std::fs::write(&settings, QUEUE_SETTINGS).unwrap();
    for (flags, says) in [
        (
            &["--degraded", "9"][..],
            "--degraded 9: expected at most --workers (8)",
        ),
        (
            &["--workers", "0"][..],
            "--workers 0: expected between 1 and 1000 workers",
        ),
        (
            &["--callers", "0"][..],
            "--callers 0: expected between 1 and 1000 callers",
        ),
        (
            &["--service", "0s"][..],
            "--service 0.0 s: expected between 1ms and 60s",
        ),
        (&["--fault-for", "3000s"][..], "calls per run"),
    ] {
        bin()
            .arg("simulate")
            .arg(&settings)
            .args(["--scenario", "queue"])
            .args(flags)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}
