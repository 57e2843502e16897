//! `outbound-guard tune` against the truth. Each upstream is a real HTTP server on
//! 127.0.0.1 (the demo's fake upstream), called every 10 ms through a real guard in
//! observe mode whose recorder writes every call (an observe recording: every outcome
//! known, every figure exact), on real time; then `tune` of that file. Each right
//! answer follows from the objectives by construction:
//!
//! - short bursts of failures on a healthy upstream, healthy refusals capped at none:
//!   the settings it ran with open on them and refuse healthy calls; the answer must
//!   not (it refuses none), and `--write` writes it, comments kept;
//! - a hang, to be failed fast within a second: the answer does;
//! - a steady 40% error rate, failing fast within a second and refusing no healthy call
//!   wanted: no setting can do both, and the answer says so, with the trade-off: one
//!   alternative fails fast and refuses most healthy calls, one lets every failure
//!   through;
//! - an objective no setting meets (failing fast within a millisecond) is said so.

// expect-test writes every golden text as `r#"…"#`, quotes or not.
#![allow(clippy::needless_raw_string_hashes)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::bin;
use expect_test::{expect, Expect};
use outbound_guard_tests::upstream::{FakeUpstream, Fault};
use serde_json::Value;

/// The settings each recording ran with (observe mode), short real durations.
const SETTINGS: &str = r#"# The settings the service ran with, in observe mode.
[systems.s]
cb_mode = "observe"
connect_timeout = "50ms"
read_timeout = "200ms"
total_timeout = "400ms"
cb_slow_threshold = "300ms"
# a small window: it opens on a burst
cb_window_size = 20
cb_min_calls = 10
cb_failure_rate = 0.5
cb_open_duration = "1s"
cb_half_open_calls = 1
max_connections = 200
"#;

/// What the upstream does for how long, in order.
type Phases = &'static [(Duration, Upstream)];

#[derive(Clone, Copy)]
enum Upstream {
    Healthy,
    Failing,
    Hang,
    FailShare(f64),
}

/// Records `phases` against a real upstream: the recording's and the settings' paths.
async fn record(name: &str, phases: Phases) -> (PathBuf, PathBuf) {
    let dir = common::scratch(&format!("tune-{name}"));
    let recorded = common::RecordedGuard::new(&dir, SETTINGS);
    let guard = &recorded.guard;
    let upstream = FakeUpstream::start().await;
    let client = common::client(Duration::from_millis(200));
    let url = format!("{}/pay", upstream.url());
    let mut running = Vec::new();
    for (phase, behaviour) in phases {
        match behaviour {
            Upstream::Healthy => upstream.always(Fault::Ok),
            Upstream::Failing => upstream.always(Fault::Status(500)),
            Upstream::Hang => upstream.always(Fault::Hang),
            Upstream::FailShare(share) => upstream.faults().set_fail_share(*share),
        }
        common::calls_for(*phase, guard, &client, &url, &mut running).await;
    }
    for call in running {
        call.await.unwrap();
    }
    recorded.flush();
    (recorded.recording.clone(), recorded.settings.clone())
}

/// A recording's line: a call of system `s` at `ms` after the origin, taking 5 ms.
fn line(text: &mut String, ms: u64, outcome: &str) {
    use std::fmt::Write as _;
    let _ = writeln!(
        text,
        r#"{{"system":"s","start":{}.000,"duration_ms":5.0,"outcome":"{outcome}"}}"#,
        1_796_083_200_000 + ms
    );
}

/// `tune` of `recording` through `settings`, with `args`.
fn run(recording: &Path, settings: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .args(["tune", recording.to_str().unwrap(), "--settings"])
        .arg(settings)
        .args(args)
        .output()
        .unwrap()
}

/// `tune --json` of `recording` with `args`: system `s`'s answer (whether or not it
/// has a recommended setting: exit 0 or 3).
fn tune(recording: &Path, settings: &Path, args: &[&str]) -> Value {
    tune_all(recording, settings, args)["systems"]["s"].clone()
}

/// `tune --json` of `recording` with `args`: the whole answer.
fn tune_all(recording: &Path, settings: &Path, args: &[&str]) -> Value {
    let output = run(
        recording,
        settings,
        &[&["--json", "--strict"], args].concat(),
    );
    assert!(
        matches!(output.status.code(), Some(0 | 3)),
        "{:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    let recommended = answer["systems"]
        .as_object()
        .unwrap()
        .values()
        .all(|s| !s["recommended"].is_null());
    assert_eq!(output.status.code(), Some(if recommended { 0 } else { 3 }));
    answer
}

/// `tune`'s screen of `recording` with `args`, every system tuned (exit 0).
fn screen(recording: &Path, settings: &Path, args: &[&str]) -> String {
    screen_with(recording, settings, args, 0)
}

/// `tune`'s screen of `recording` with `args`, exiting with `status`.
fn screen_with(recording: &Path, settings: &Path, args: &[&str], status: i32) -> String {
    let output = run(recording, settings, args);
    assert_eq!(
        output.status.code(),
        Some(status),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Piped, no progress bar.
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A figure's value, once it is exact (an observe recording's are).
fn exact(setting: &Value, figure: &str) -> u64 {
    let f = &setting["figures"][figure];
    assert_eq!(f["exact"], true, "{figure}: {f}");
    f["value"].as_u64().unwrap()
}

/// Milliseconds.
const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_bursts_on_a_healthy_upstream_are_not_tuned_into_openings() {
    const PHASES: Phases = &[
        (ms(1_500), Upstream::Healthy),
        (ms(150), Upstream::Failing),
        (ms(1_500), Upstream::Healthy),
        (ms(150), Upstream::Failing),
        (ms(1_500), Upstream::Healthy),
        (ms(150), Upstream::Failing),
        (ms(1_500), Upstream::Healthy),
    ];
    let (recording, settings) = record("bursts", PHASES).await;
    let s = tune(&recording, &settings, &["--healthy-refused", "0"]);
    // The settings it ran with open on a burst and refuse the healthy calls after it.
    assert!(exact(&s["as_set"], "openings") >= 1, "{}", s["as_set"]);
    assert!(
        exact(&s["as_set"], "healthy_refused") > 0,
        "{}",
        s["as_set"]
    );
    assert_eq!(s["as_set"]["objectives"]["healthy_refused"], "missed");
    let recommended = &s["recommended"];
    assert_eq!(recommended["meets_every_objective"], true, "{s}");
    assert_eq!(exact(recommended, "healthy_refused"), 0, "{recommended}");
    assert!(!recommended["change"].as_object().unwrap().is_empty());

    // Written: only the changed keys, every comment kept, and it loads as `check` loads.
    let written = recording.with_file_name("tuned.toml");
    let to = written.to_str().unwrap();
    let text = screen(
        &recording,
        &settings,
        &["--healthy-refused", "0", "--write", to],
    );
    assert!(text.contains("wrote"), "{text}");
    let text = std::fs::read_to_string(&written).unwrap();
    for line in SETTINGS.lines().filter(|l| l.starts_with('#')) {
        assert!(text.contains(line), "{line:?} lost:\n{text}");
    }
    let changed = recommended["change"].as_object().unwrap();
    for (before, after) in SETTINGS.lines().zip(text.lines()) {
        let key = before.split(" = ").next().unwrap();
        if !changed.contains_key(key) {
            assert_eq!(before, after, "a key not recommended changed:\n{text}");
        }
    }
    bin().arg("check").arg(&written).assert().success();
    // Tuned from the written file, the answer is the file itself.
    let again = tune(
        &recording,
        &written,
        &["--healthy-refused", "0", "--max-settings", "1"],
    );
    assert_eq!(again["as_set"]["figures"], recommended["figures"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_is_failed_fast_within_the_objective() {
    const PHASES: Phases = &[
        (ms(1_500), Upstream::Healthy),
        (ms(4_000), Upstream::Hang),
        (ms(1_500), Upstream::Healthy),
    ];
    let (recording, _) = record("hang", PHASES).await;
    // A window of 200 that needs 100 calls fails fast only after a second of calls.
    let slow = recording.with_file_name("slow.toml");
    std::fs::write(
        &slow,
        SETTINGS
            .replace("cb_window_size = 20", "cb_window_size = 200")
            .replace("cb_min_calls = 10", "cb_min_calls = 100"),
    )
    .unwrap();
    let args = ["--fail-fast-within", "1s", "--healthy-refused", "5%"];
    let s = tune(&recording, &slow, &args);
    assert_eq!(
        s["incidents"].as_array().unwrap().len(),
        1,
        "{}",
        s["incidents"]
    );
    assert_eq!(
        s["as_set"]["objectives"]["fail_fast_within"], "missed",
        "{}",
        s["as_set"]
    );
    let recommended = &s["recommended"];
    assert_eq!(recommended["meets_every_objective"], true, "{s}");
    let fast = &recommended["fast_fail"][0];
    assert_eq!(fast["exact"], true);
    assert!(fast["ms"].as_f64().unwrap() <= 1_000.0, "{fast}");

    // No setting fails fast within a millisecond of a hang's first call: said so.
    // No setting fails fast within a millisecond of a hang's first call: the one
    // recommended is known better than the settings as run, and says what it misses.
    let text = screen(
        &recording,
        &slow,
        &["--fail-fast-within", "1ms", "--max-settings", "40"],
    );
    assert!(
        text.contains("no setting tried meets every objective: this one is known no worse"),
        "{text}"
    );
    assert!(text.contains("misses the time to fail fast by"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steady_error_rate_comes_back_with_the_trade_off() {
    const PHASES: Phases = &[
        (ms(1_000), Upstream::Healthy),
        (ms(6_000), Upstream::FailShare(0.4)),
        (ms(500), Upstream::Healthy),
    ];
    let (recording, settings) = record("steady", PHASES).await;
    let args = ["--fail-fast-within", "1s", "--healthy-refused", "0"];
    let s = tune(&recording, &settings, &args);
    assert!(
        s["recommended"].is_null(),
        "a silent pick: {}",
        s["recommended"]
    );
    let alternatives = s["alternatives"].as_array().unwrap();
    // The recording's failing calls.
    let failing = std::fs::read_to_string(&recording)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""outcome":"failure""#))
        .count() as u64;
    // One fails fast, and refuses most of the healthy calls of the incident.
    let fast = alternatives
        .iter()
        .find(|a| a["objectives"]["fail_fast_within"] == "met")
        .unwrap_or_else(|| panic!("none fails fast: {alternatives:?}"));
    assert!(exact(fast, "healthy_refused") > 0);
    // One refuses no healthy call, and lets every failing call through (here the
    // settings it ran with: 0.5 never opens at 40%).
    let open = std::iter::once(&s["as_set"])
        .chain(alternatives)
        .find(|a| a["objectives"]["healthy_refused"] == "met")
        .unwrap_or_else(|| panic!("none refuses no healthy call: {alternatives:?}"));
    assert_eq!(exact(open, "openings"), 0, "{open}");
    assert_eq!(exact(open, "failing_let_through"), failing, "{open}");
    // A threshold at or below the 40% opens; above it, nothing does.
    let rate = |a: &Value| {
        a["change"]["cb_failure_rate"]
            .as_str()
            .map_or(0.5, |r| r.parse::<f64>().unwrap())
    };
    assert!(rate(fast) <= 0.4, "{fast}");
    assert!(exact(fast, "failing_let_through") < failing);
    // No alternative is the same as having no breaker: each lets fewer failing calls
    // through than all of them.
    for a in alternatives {
        assert!(exact(a, "failing_let_through") < failing, "{a}");
    }

    // Nothing to recommend: exit 3.
    let text = screen_with(&recording, &settings, &args, 3);
    assert!(
        text.contains("no setting tried meets every objective"),
        "{text}"
    );
    assert!(text.contains("refuses more healthy calls"), "{text}");
    assert!(text.contains("fails fast sooner"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
}

/// Ctrl-C stops the search after the replays running, and the answer is the best of
/// the settings tried, said to be so.
#[cfg(unix)]
#[test]
fn an_interrupted_search_answers_with_the_best_so_far() {
    let dir = common::scratch("tune-interrupted");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, SETTINGS).unwrap();
    // 200,000 calls, one every 10 ms, every fiftieth failing: each replay takes a while.
    let mut text = String::new();
    for n in 0..200_000_u64 {
        line(
            &mut text,
            n * 10,
            if n % 50 == 0 { "failure" } else { "success" },
        );
    }
    let recording = dir.join("calls.jsonl");
    std::fs::write(&recording, text).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_outbound-guard"))
        .arg("tune")
        .arg(&recording)
        .arg("--settings")
        .arg(&settings)
        .args(["--max-settings", "100000", "--jobs", "1", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let report = common::json_report(&output);
    let s = &report["systems"]["s"];
    assert_eq!(s["interrupted"], true, "{s}");
    let tried = s["tried"].as_u64().unwrap();
    assert!((1..100_000).contains(&tried), "{tried} tried");
    assert!(s["as_set"]["figures"].is_object());
}

/// A log taken behind an enforcing guard has holes where its breaker refused calls:
/// no setting's counts can be told, and `tune` says so rather than pick one.
#[test]
fn a_recording_with_holes_is_not_tuned() {
    let dir = common::scratch("tune-holes");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, SETTINGS).unwrap();
    let mut text = String::new();
    let mut line = |ms: u64, outcome: &str| line(&mut text, ms, outcome);
    // 10 s healthy at 100 a second, 30 failures, then one call a second for 10 s (the
    // rest refused by the guard in front, not logged), then 100 a second again.
    for n in 0..1_000 {
        line(n * 10, "success");
    }
    for n in 0..30 {
        line(10_000 + n * 10, "failure");
    }
    for n in 0..10 {
        line(10_300 + n * 1_000, "success");
    }
    for n in 0..1_000 {
        line(20_300 + n * 10, "success");
    }
    let recording = dir.join("behind.jsonl");
    std::fs::write(&recording, text).unwrap();
    let s = tune(&recording, &settings, &[]);
    assert_eq!(s["holes"], true, "{s}");
    assert!(s["recommended"].is_null());
    assert!(s["cannot_tune"].as_str().unwrap().contains("observe mode"));
    let written = dir.join("tuned.toml");
    let output = run(
        &recording,
        &settings,
        &["--write", written.to_str().unwrap()],
    );
    // Nothing could be tuned: exit 3, with `--write` or without.
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot be tuned"));
    assert_eq!(run(&recording, &settings, &[]).status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stdout).contains("cannot be tuned"));
    assert!(!written.exists());
}

/// The settings of the plain incident's recordings: a window of 100 that opens at 90%
/// failing, so that it fails fast only some 45 s into a hang.
const HANG_SETTINGS: &str = r#"# The settings the service ran with.
[systems.s]
cb_mode = "observe"
connect_timeout = "100ms"
read_timeout = "1s"
total_timeout = "2s"
cb_window_size = 100
cb_min_calls = 20
cb_failure_rate = 0.9
cb_open_duration = "30s"
cb_half_open_calls = 1
"#;

/// A scripted recording of the plain incident: a healthy upstream called about twice a
/// second (250 to 750 ms apart, spread by a fixed sequence) for 3 minutes, hanging for
/// 3 min 7 s (each call timed out by the guard's 2 s `total_timeout`), then healthy for
/// 3 minutes. `enforcing`: as a guard enforcing `HANG_SETTINGS` recorded it, open from
/// 44.6 s into the hang for 30 s at a time, one trial call at each period's end, the
/// calls it refused `rejected`.
fn hang_recording(dir: &Path, enforcing: bool) -> PathBuf {
    use std::fmt::Write as _;
    let mut text = String::new();
    let (mut at, mut n) = (0_u64, 0_u64);
    let hang = 180_000..367_300;
    let opened = hang.start + 44_600;
    let (mut period, mut closed) = (0, false);
    while at < 547_300 {
        let mut outcome = if hang.contains(&at) {
            "timeout"
        } else {
            "success"
        };
        let mut duration = if hang.contains(&at) {
            2_000
        } else {
            10 + n % 30
        };
        if enforcing && at >= opened && !closed {
            let k = (at - opened) / 30_000;
            if k >= 1 && k != period {
                // The trial: it closes the breaker once the upstream answers.
                period = k;
                closed = outcome == "success";
            } else {
                (outcome, duration) = ("rejected", 0);
            }
        }
        let _ = writeln!(
            text,
            r#"{{"system":"s","start":{}.000,"duration_ms":{duration}.0,"outcome":"{outcome}"}}"#,
            1_796_083_200_000 + at
        );
        n += 1;
        at += 250 + (n * 7_919) % 500;
    }
    let path = dir.join(if enforcing {
        "hang-enforcing.jsonl"
    } else {
        "hang.jsonl"
    });
    std::fs::write(&path, text).unwrap();
    path
}

/// Every line of a screen within 100 columns.
fn within_100(text: &str) {
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{line:?} of:\n{text}");
    }
}

/// The plain incident: a hang failed fast after 45 s. The default objectives yield a
/// setting that fails fast sooner and within them, and `--write` writes it.
#[test]
fn the_plain_hang_gets_a_setting_that_fails_fast_sooner() {
    let dir = common::scratch("tune-plain-hang");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, HANG_SETTINGS).unwrap();
    let recording = hang_recording(&dir, false);
    let s = tune(&recording, &settings, &[]);
    let as_set = s["as_set"]["fast_fail"][0]["ms"].as_f64().unwrap();
    assert!((40_000.0..50_000.0).contains(&as_set), "{as_set}");
    assert_eq!(s["as_set"]["objectives"]["fail_fast_within"], "missed");
    let recommended = &s["recommended"];
    assert_eq!(s["recommended_because"], "meets_every_objective", "{s}");
    assert_eq!(recommended["meets_every_objective"], true);
    let fast = recommended["fast_fail"][0]["ms"].as_f64().unwrap();
    assert!(fast <= 20_000.0 && fast < as_set, "{fast}");
    // One unit per key: the time callers waited in milliseconds, in both places.
    assert_eq!(
        recommended["figures"]["waited_ms"]["value"]
            .as_f64()
            .unwrap(),
        recommended["waited_ms"].as_f64().unwrap()
    );
    // Within the default cap: 1% of the healthy calls.
    let healthy = s["healthy_calls"]["value"].as_u64().unwrap();
    assert_eq!(s["healthy_calls"]["exact"], true);
    assert!(exact(recommended, "healthy_refused") <= healthy / 100);

    let written = dir.join("tuned.toml");
    let text = screen(
        &recording,
        &settings,
        &["--write", written.to_str().unwrap()],
    );
    within_100(&text);
    assert!(text.contains("wrote"), "{text}");
    let again = tune(&recording, &written, &["--max-settings", "1"]);
    assert_eq!(again["as_set"]["figures"], recommended["figures"]);
}

/// Where no setting meets every objective, the best known no worse than the settings
/// as run on every figure and better on one is recommended as such, with what it
/// misses and by how much, and written.
#[test]
fn where_no_setting_meets_every_objective_the_best_known_better_is_recommended() {
    let dir = common::scratch("tune-known-better");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, HANG_SETTINGS).unwrap();
    let recording = hang_recording(&dir, false);
    // Nothing fails fast within a millisecond of a hang's first call.
    let args = ["--fail-fast-within", "1ms"];
    let s = tune(&recording, &settings, &args);
    assert_eq!(s["recommended_because"], "better_than_as_set", "{s}");
    let recommended = &s["recommended"];
    assert_eq!(recommended["meets_every_objective"], false);
    assert_eq!(recommended["objectives"]["fail_fast_within"], "missed");
    let misses = s["recommended_misses"].as_array().unwrap();
    assert!(
        misses.iter().any(|m| m
            .as_str()
            .unwrap()
            .starts_with("misses the time to fail fast by")),
        "{misses:?}"
    );
    // No worse on any figure, better on one (every figure exact here).
    let figures = ["healthy_refused", "failing_let_through"];
    let (base, ours) = (&s["as_set"], recommended);
    for f in figures {
        assert!(
            exact(ours, f) <= exact(base, f),
            "{f}: {ours} against {base}"
        );
    }
    let slowest = |t: &Value| t["slowest_incident_ms"].as_f64().unwrap();
    assert!(slowest(ours) <= slowest(base));
    assert!(
        figures.iter().any(|f| exact(ours, f) < exact(base, f)) || slowest(ours) < slowest(base)
    );

    let written = dir.join("tuned.toml");
    let text = screen(
        &recording,
        &settings,
        &[&args[..], &["--write", written.to_str().unwrap()]].concat(),
    );
    within_100(&text);
    assert!(text.contains("known better than as set"), "{text}");
    assert!(text.contains("misses the time to fail fast by"), "{text}");
    bin().arg("check").arg(&written).assert().success();
}

/// On an enforcing recording the healthy total is an estimate: an objective is met only
/// where the whole interval of the figure is within the whole interval of the cap, a
/// setting meets every objective only where each is met, and every alternative is known
/// to let fewer failing calls through than no breaker at all.
#[test]
fn on_an_enforcing_recording_an_objective_is_met_only_by_its_whole_interval() {
    let dir = common::scratch("tune-enforcing");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, HANG_SETTINGS.replace("\"observe\"", "\"auto\"")).unwrap();
    let recording = hang_recording(&dir, true);
    let s = tune(
        &recording,
        &settings,
        &["--healthy-refused", "5%", "--max-settings", "80"],
    );
    assert_eq!(s["holes"], false, "{s}");
    let healthy = &s["healthy_calls"];
    assert_eq!(
        healthy["exact"], false,
        "the refused calls are guessed: {healthy}"
    );
    let cap_low = (0.05 * healthy["low"].as_f64().unwrap()).floor() as u64;
    let settings: Vec<&Value> = std::iter::once(&s["as_set"])
        .chain(s["front"].as_array().unwrap())
        .chain(s["alternatives"].as_array().unwrap())
        .collect();
    for t in &settings {
        let objectives = t["objectives"].as_object().unwrap();
        let all_met = objectives
            .values()
            .all(|o| o == "met" || o.get("not_judged").is_some());
        assert_eq!(t["meets_every_objective"], all_met, "{t}");
        if objectives["healthy_refused"] == "met" {
            let high = t["figures"]["healthy_refused"]["high"].as_u64().unwrap();
            assert!(high <= cap_low, "met at {high} over {cap_low}: {t}");
        }
        for o in objectives.values() {
            assert!(o == "met" || o == "missed" || o.is_object(), "{o}");
        }
    }
    let alternatives = s["alternatives"].as_array().unwrap();
    assert!(!alternatives.is_empty(), "{s}");
    // Fewer failing calls through than no breaker is told on the same draws (every
    // draw's failing calls): the value, the draws' median, is below no breaker's. (The
    // intervals, each the draws widened by the stated error, may overlap.)
    let failing = &s["failing_calls"];
    for a in alternatives {
        let through = &a["figures"]["failing_let_through"];
        assert!(
            through["value"].as_u64().unwrap() < failing["value"].as_u64().unwrap(),
            "no better than no breaker: {a}"
        );
        assert!(told_apart(a, &s["as_set"]), "{a}\nagainst {}", s["as_set"]);
    }
    let text = screen_with(
        &recording,
        &settings_path(&dir),
        &["--healthy-refused", "5%", "--max-settings", "80"],
        if s["recommended"].is_null() { 3 } else { 0 },
    );
    within_100(&text);
    assert!(!text.contains("likely"), "{text}");
}

/// Whether two settings' figures are told apart on one figure of the front: intervals
/// that do not overlap, or times to fail fast that differ.
fn told_apart(a: &Value, b: &Value) -> bool {
    let interval = |t: &Value, f: &str| {
        let f = &t["figures"][f];
        (f["low"].as_u64(), f["high"].as_u64())
    };
    let counts = ["healthy_refused", "failing_let_through"].iter().any(|f| {
        match (interval(a, f), interval(b, f)) {
            ((Some(al), Some(ah)), (Some(bl), Some(bh))) => ah < bl || bh < al,
            _ => false,
        }
    });
    let fast = |t: &Value| t["fast_fail"][0].clone();
    counts || (fast(a)["exact"] == true && fast(b)["exact"] == true && fast(a) != fast(b))
}

fn settings_path(dir: &Path) -> PathBuf {
    dir.join("resilience.toml")
}

/// One system tuned and another that cannot be: exit 4, and `--write` writes nothing.
#[test]
fn one_system_tuned_and_one_not_exits_4() {
    let dir = common::scratch("tune-partly");
    let settings = dir.join("resilience.toml");
    std::fs::write(
        &settings,
        format!(
            "{HANG_SETTINGS}\n{}",
            SETTINGS.replace("[systems.s]", "[systems.t]")
        ),
    )
    .unwrap();
    let hang = std::fs::read_to_string(hang_recording(&dir, false)).unwrap();
    // `t`: a log behind an enforcing guard, with a hole (as `a_recording_with_holes_is_not_tuned`).
    let mut t = String::new();
    let mut at = |ms: u64, outcome: &str| line(&mut t, ms, outcome);
    for n in 0..1_000 {
        at(n * 10, "success");
    }
    for n in 0..30 {
        at(10_000 + n * 10, "failure");
    }
    for n in 0..10 {
        at(10_300 + n * 1_000, "success");
    }
    for n in 0..1_000 {
        at(20_300 + n * 10, "success");
    }
    let recording = dir.join("both.jsonl");
    std::fs::write(
        &recording,
        hang + &t.replace(r#""system":"s""#, r#""system":"t""#),
    )
    .unwrap();
    let written = dir.join("tuned.toml");
    let output = run(
        &recording,
        &settings,
        &["--write", written.to_str().unwrap()],
    );
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!written.exists());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("cannot be tuned"), "{text}");
    within_100(&text);
}

/// `tune`'s screen of `recording` with `args` against a golden text, less its first
/// line (the file's path, and how long the search took).
fn golden(recording: &Path, settings: &Path, args: &[&str], status: i32, text: &Expect) {
    let screen = screen_with(
        recording,
        settings,
        &[&["--jobs", "2"], args].concat(),
        status,
    );
    within_100(&screen);
    let (_, rest) = screen.split_once('\n').unwrap();
    text.assert_eq(rest);
}

/// The screens as a person reads them, held as golden texts (`UPDATE_EXPECT=1 cargo test
/// -p outbound-guard-cli --test tune` rewrites them after a deliberate change): the
/// plain hang with the default objectives; with an objective no setting meets, the
/// setting known better than the settings as run; and the enforcing recording of the
/// same hang, where the refused calls' answers are guessed.
#[test]
fn the_screens_as_a_person_reads_them() {
    let dir = common::scratch("tune-golden");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, HANG_SETTINGS).unwrap();
    let recording = hang_recording(&dir, false);
    golden(
        &recording,
        &settings,
        &[],
        0,
        &expect![[r#"

        s: 1,096 calls, 1 incident; 200 settings tried
          searched: cb_failure_rate, cb_window_size, cb_min_calls, cb_open_duration, cb_half_open_calls,
            cb_slow_threshold, total_timeout
          objectives:
            refuse at most 1% of healthy calls (7 of 720)
            fail fast within 20.0 s in every incident
            let as few failing calls through as can be
          as set: misses the healthy calls' cap and the time to fail fast
          recommended: cb_failure_rate=0.1, cb_slow_threshold=250ms
            meets every objective; refuses fewer healthy calls, lets fewer failing calls through, fails fast
              sooner than as set
            decided by incident 1 (2026-12-01 00:03:00.120 UTC, 3m 6s): it fails fast after 4.4 s; as set,
              it fails fast after 45.1 s
          A: cb_window_size=20, cb_min_calls=4, cb_failure_rate=0.4, cb_open_duration=5s,
            cb_slow_threshold=250ms
            meets every objective; lets more failing calls through, fails fast sooner than the recommended;
              the same: healthy calls refused
          B: cb_window_size=20, cb_min_calls=4, cb_failure_rate=0.1, cb_open_duration=120s,
            cb_slow_threshold=250ms
            misses the healthy calls' cap; refuses more healthy calls, lets fewer failing calls through,
              fails fast sooner than the recommended
          C: cb_window_size=20, cb_min_calls=4, cb_failure_rate=0.1, cb_open_duration=10s,
            cb_slow_threshold=250ms
            meets every objective; refuses more healthy calls, lets more failing calls through, fails fast
              sooner than the recommended

                                      as set        recommended   A             B             C
          healthy calls refused       20 (2.8%)     0 (0.0%)      0 (0.0%)      108 (15.0%)   5 (0.7%)
          failing calls let through   95            15            40            3             19
          time callers waited         112.1 s       32.6 s        57.6 s        17.9 s        36.5 s
          openings                    5             6             33            2             18
          fails fast after, in incident
            1 at 00:03:00, 3m 6s      45.1 s        4.4 s         3.8 s         937 ms        937 ms
          meets healthy calls' cap    missed        met           met           missed        met
          meets time to fail fast     missed        met           met           met           met

        every figure exact: the recording has every call's outcome
    "#]],
    );
    golden(
        &recording,
        &settings,
        &["--fail-fast-within", "500ms", "--max-settings", "60"],
        0,
        &expect![[r#"

            s: 1,096 calls, 1 incident; 60 settings tried
              searched: cb_failure_rate, cb_window_size, cb_min_calls, cb_open_duration, cb_half_open_calls,
                cb_slow_threshold, total_timeout
              objectives:
                refuse at most 1% of healthy calls (7 of 720)
                fail fast within 500 ms in every incident
                let as few failing calls through as can be
              as set: misses the healthy calls' cap and the time to fail fast
              recommended: cb_failure_rate=0.1, cb_slow_threshold=250ms
                no setting tried meets every objective: this one is known no worse than as set on any figure and
                  better on at least one
                misses the time to fail fast by 3.9 s: the longest an incident goes before it fails fast 4.4 s,
                  the cap 500 ms
                refuses fewer healthy calls, lets fewer failing calls through, fails fast sooner than as set
                decided by incident 1 (2026-12-01 00:03:00.120 UTC, 3m 6s): it fails fast after 4.4 s; as set,
                  it fails fast after 45.1 s
              A: cb_window_size=20, cb_min_calls=4, cb_failure_rate=0.1, cb_slow_threshold=250ms
                misses the healthy calls' cap and the time to fail fast; refuses more healthy calls, lets fewer
                  failing calls through, fails fast sooner than the recommended

                                          as set        recommended   A
              healthy calls refused       20 (2.8%)     0 (0.0%)      53 (7.4%)
              failing calls let through   95            15            8
              time callers waited         112.1 s       32.6 s        24.3 s
              openings                    5             6             7
              fails fast after, in incident
                1 at 00:03:00, 3m 6s      45.1 s        4.4 s         937 ms
              meets healthy calls' cap    missed        met           missed
              meets time to fail fast     missed        missed        missed

            every figure exact: the recording has every call's outcome
        "#]],
    );
    let enforcing = dir.join("enforcing.toml");
    std::fs::write(&enforcing, HANG_SETTINGS.replace("\"observe\"", "\"auto\"")).unwrap();
    golden(
        &hang_recording(&dir, true),
        &enforcing,
        &["--healthy-refused", "5%", "--max-settings", "30"],
        3,
        &expect![[r#"

            s: 1,096 calls, 1 incident; 30 settings tried
              searched: cb_failure_rate, cb_window_size, cb_min_calls, cb_open_duration, cb_half_open_calls,
                cb_slow_threshold, total_timeout
              objectives:
                refuse at most 5% of healthy calls (≈41 (35 to 48) of ≈825 (706 to 973))
                fail fast within 20.0 s in every incident
                let as few failing calls through as can be
              as set: misses the time to fail fast; cannot tell whether it meets the healthy calls' cap
              recommended: none: no setting tried meets every objective, and none is known no worse than as set
                on any figure and better on one; the alternatives trade one for another
                no setting tried is known to refuse at most 5% of healthy calls (≈41 (35 to 48) of ≈825 (706 to
                  973)): the closest, cb_window_size=200, cb_min_calls=40, has ≈0 (0 to 231) healthy calls
                  refused
              A: cb_open_duration=5s
                misses the time to fail fast; cannot tell whether it meets the healthy calls' cap; refuses fewer
                  healthy calls, lets more failing calls through than as set; the same: the time to fail fast
              B: cb_window_size=20, cb_min_calls=4, cb_failure_rate=0.1
                cannot tell whether it meets the healthy calls' cap; lets fewer failing calls through, fails
                  fast sooner than as set; cannot tell apart: healthy calls refused
              C: cb_window_size=20, cb_min_calls=4, cb_failure_rate=0.2
                cannot tell whether it meets the healthy calls' cap; lets fewer failing calls through, fails
                  fast sooner than as set; cannot tell apart: healthy calls refused

                                          as set        A             B             C
              healthy calls refused       ≈115 (13.9%)  ≈8 (1.0%)     ≈150 (18.2%)  ≈145 (17.6%)
              failing calls let through   ≈95±164       ≈224±268      ≈10±153       ≈13±151
              time callers waited         ≈112.1 s      ≈4m 2s±4m     ≈26.5 s       ≈29.4 s
              openings                    ≈5±106        ≈7±151        ≈7±144        ≈7±144
              fails fast after, in incident
                1 at 00:03:00, 2m 44s     45.1 s        45.1 s        1.3 s         2.2 s
              meets healthy calls' cap    cannot tell   cannot tell   cannot tell   cannot tell
              meets time to fail fast     missed        missed        met           met

            ≈: estimated from the answers guessed for calls the recording's guard refused; ?: the recording
              cannot tell (--json says why); every figure exact: record in observe mode (cb_mode = "observe")
        "#]],
    );
}
