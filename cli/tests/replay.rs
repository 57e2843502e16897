//! `outbound-guard replay`, run as a binary, on a recording the payments demo made of
//! its own traffic (`DEMO_RECORD=… cargo run -p payments-demo`, committed as
//! `tests/data/demo-recording.jsonl`, transitions included).
//!
//! Replayed with the settings the demo ran with (its file and the `CLIENT_…` overrides
//! it sets itself), the real guard makes the transitions the live run logged, in the
//! same order and within [`TOLERANCE`] (in fact within a few milliseconds: the replay
//! keeps the recorder's microseconds, and a live transition happened a little before
//! the recorder saw the call that caused it end). With a stricter and a looser `cb_failure_rate`, it opens
//! sooner and later, as `simulate` predicts for an error burst.

mod common;

use std::io::Write as _;
use std::path::PathBuf;

use assert_cmd::Command;
use common::{bin, DEMO};
use serde_json::Value;

/// The demo's recording.
const RECORDING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/demo-recording.jsonl"
);

/// How far a replayed transition may be from the live one, in milliseconds.
const TOLERANCE: f64 = 50.0;

/// The overrides the demo sets where the user has not (`scenario::env::DEMO_DEFAULTS`).
const DEMO_DEFAULTS: [(&str, &str); 8] = [
    ("CLIENT_SBER__CONNECT_TIMEOUT", "0.25"),
    ("CLIENT_SBER__READ_TIMEOUT", "1.2"),
    ("CLIENT_SBER__TOTAL_TIMEOUT", "2"),
    ("CLIENT_SBER__CB_OPEN_DURATION", "3"),
    ("CLIENT_CUSTOMER__CONNECT_TIMEOUT", "0.25"),
    ("CLIENT_CUSTOMER__READ_TIMEOUT", "1.2"),
    ("CLIENT_CUSTOMER__TOTAL_TIMEOUT", "2"),
    ("CLIENT_CUSTOMER__CB_OPEN_DURATION", "3"),
];

fn demo_replay() -> Command {
    let mut command = bin();
    // Two walked ways of the refused calls' answers: the debug build replays slowly,
    // and these tests judge the estimate and the transitions, not the ranges.
    command.args(["replay", RECORDING, "--settings", DEMO, "--env", "--json"]);
    command.args(["--max-replays", "2"]);
    command.envs(DEMO_DEFAULTS);
    command
}

fn json(command: &mut Command) -> Value {
    common::json_report(&command.output().unwrap())
}

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("replay-{name}"))
}

#[test]
fn the_demo_replayed_with_its_own_settings_makes_the_transitions_it_logged() {
    let report = json(&mut demo_replay());
    let sber = &report["systems"]["sber"];
    let live = sber["recorded_transitions"].as_array().unwrap();
    let replayed = sber["replays"][0]["transitions"].as_array().unwrap();
    // The demo's scenario: three error or slow phases that open it, and an operator's
    // forced open through the settings file, each with its way back.
    assert!(live.len() >= 10, "{live:?}");
    let steps = |all: &[Value]| -> Vec<(String, String)> {
        all.iter()
            .map(|t| {
                (
                    t["from"].as_str().unwrap().to_owned(),
                    t["to"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(steps(replayed), steps(live));
    for (r, l) in replayed.iter().zip(live) {
        let (r, l) = (r["at_ms"].as_f64().unwrap(), l["at_ms"].as_f64().unwrap());
        assert!(
            (r - l).abs() <= TOLERANCE,
            "replayed at {r} ms, live at {l} ms"
        );
    }
    // The customer system stayed closed live, and does in the replay.
    assert_eq!(
        report["systems"]["customer"]["recorded_transitions"],
        Value::Array(vec![])
    );
    assert_eq!(
        report["systems"]["customer"]["replays"][0]["transitions"],
        Value::Array(vec![])
    );
}

/// The first opening's time (ms) of each replay.
fn first_openings(system: &Value) -> Vec<f64> {
    system["replays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["openings"][0]["at_ms"].as_f64().unwrap())
        .collect()
}

#[test]
fn a_stricter_rate_opens_sooner_and_a_looser_later_as_simulate_predicts() {
    let report = json(
        demo_replay()
            .args(["--compare", "cb_failure_rate=0.1"])
            .args(["--compare", "cb_failure_rate=0.6"]),
    );
    let sber = &report["systems"]["sber"];
    let labels: Vec<&str> = sber["replays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["settings"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["as set", "cb_failure_rate=0.1", "cb_failure_rate=0.6"]
    );
    let opened = first_openings(sber);
    assert!(opened[1] < opened[0] && opened[0] < opened[2], "{opened:?}");
    let let_through = |i: usize| sber["replays"][i]["failing_let_through"].as_u64().unwrap();
    assert!(
        let_through(1) < let_through(0),
        "{} {}",
        let_through(1),
        let_through(0)
    );

    // `simulate` of an error burst after a healthy start: the same order.
    for (change, sooner) in [
        ("cb_failure_rate=0.1", true),
        ("cb_failure_rate=0.6", false),
    ] {
        let simulated = json(bin().args([
            "simulate",
            DEMO,
            "--system",
            "sber",
            "--scenario",
            "errors",
            "--compare",
            change,
            "--json",
        ]));
        let warm = simulated["systems"][0]["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["warm"].as_u64() > Some(0))
            .unwrap()
            .clone();
        let compared = match &warm["compared"] {
            Value::Array(all) => all[0].clone(),
            one => one.clone(),
        };
        let (as_set, other) = (
            warm["figures"]["breaker_opened_ms"].as_f64().unwrap(),
            compared["figures"]["breaker_opened_ms"].as_f64().unwrap(),
        );
        assert_eq!(
            other < as_set,
            sooner,
            "simulate {change}: {other} vs {as_set}"
        );
        let replayed = if sooner { opened[1] } else { opened[2] };
        assert_eq!(replayed < opened[0], sooner);
    }
}

#[test]
fn bad_lines_are_numbered_and_skipped_or_refused_with_strict() {
    let dir = scratch("bad");
    let path = dir.join("calls.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(
        file,
        r#"{{"system":"sber","start":1000,"duration_ms":5,"outcome":"success"}}"#
    )
    .unwrap();
    writeln!(file, "garbage").unwrap();
    writeln!(
        file,
        r#"{{"system":"sber","start":900,"duration_ms":5,"outcome":"failure"}}"#
    )
    .unwrap();
    writeln!(
        file,
        r#"{{"system":"ledger","start":950,"duration_ms":5,"outcome":"success"}}"#
    )
    .unwrap();
    write!(file, r#"{{"system":"sber","start":1100,"dura"#).unwrap();
    drop(file);
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, "[systems.sber]\n").unwrap();

    let output = bin()
        .args([
            "replay",
            path.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("line 2: not a record"), "{stderr}");
    assert!(stderr.contains("line 5: truncated"), "{stderr}");
    assert!(
        stderr.contains("`ledger` has no `[systems.ledger]`"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["out_of_order"], 1);
    assert_eq!(report["not_in_settings"][0], "ledger");
    assert_eq!(report["bad_lines"].as_array().unwrap().len(), 2);
    assert_eq!(report["systems"]["sber"]["calls"], 2);

    let strict = bin()
        .args([
            "replay",
            path.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
            "--strict",
        ])
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("line 2: not a record"));

    // Nothing readable at all, or no file: an error, never a panic.
    std::fs::write(&path, "\u{0}\u{1}\n{\n").unwrap();
    let empty = bin()
        .args([
            "replay",
            path.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(matches!(empty.status.code(), Some(1 | 2)), "{empty:?}");
    let missing = bin()
        .args(["replay", "/nonexistent/calls.jsonl"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn the_timeline_is_written_for_each_system() {
    let dir = scratch("svg");
    let out = dir.join("timeline.svg");
    let output = demo_replay()
        .args([
            "--out",
            out.to_str().unwrap(),
            "--compare",
            "cb_failure_rate=0.5",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    for system in ["sber", "customer"] {
        let svg = std::fs::read_to_string(dir.join(format!("timeline-{system}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{system}");
        // The breakers' states, the recorded refusals, each setting's refusals, and
        // the legends in a column of their own.
        for words in [
            "breaker states",
            "recorded (live)",
            "replayed: as set",
            "replayed: cb_failure_rate=0.5",
            "cb_failure_rate=0.5: refused",
        ] {
            assert!(svg.contains(words), "{system}: {words}");
        }
        // Only sber's breaker refused calls in the recording.
        assert_eq!(
            svg.contains("refused by the recording&apos;s guard"),
            system == "sber",
            "{system}"
        );
    }
}

/// Past four settings the picture still gives each its own colour and its own legend
/// lines (the picture grows to hold them), and a setting that lets run calls the
/// recording's guard refused draws their guessed failures apart, and says in its name
/// how many answers were guessed.
#[test]
fn every_setting_has_its_own_colour_and_legend_and_guesses_are_drawn_as_guessed() {
    let dir = scratch("svg-many");
    let out = dir.join("timeline.svg");
    let rates = ["0.1", "0.2", "0.4", "0.5", "0.6", "0.7", "0.8"];
    let mut command = demo_replay();
    command.args(["--out", out.to_str().unwrap()]);
    for rate in rates {
        command.args(["--compare", &format!("cb_failure_rate={rate}")]);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let svg = std::fs::read_to_string(dir.join("timeline-sber.svg")).unwrap();
    let height: u32 = svg
        .split("height=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|h| h.parse().ok())
        .expect("the picture's height");
    // Eight settings, each at least two legend lines of 18 px, in a panel of its own.
    assert!(height > 820, "the picture grows with its legend: {height}");
    for rate in rates {
        let label = format!("cb_failure_rate={rate}");
        assert!(svg.contains(&format!("{label}: refused")), "{label}");
        assert!(
            svg.contains(&format!("{label}: failing let through")),
            "{label}"
        );
    }
    // Every setting's colour is its own: as many stroke colours among the replayed
    // lines as settings (plus the recorded calls' and the strips').
    let strokes: std::collections::BTreeSet<&str> = svg
        .split("stroke=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(
        strokes.len() >= rates.len() + 1 + 3,
        "{} colours: {strokes:?}",
        strokes.len()
    );
    // The looser settings let run calls that sber's breaker refused live: their answers
    // are guessed, and drawn as guessed.
    assert!(
        svg.contains("answers guessed)"),
        "a name says how many were guessed"
    );
    assert!(svg.contains("failing let through, guessed"));
}

/// Runs `script` with `sh`, feeding it `input`; `None` if a tool it needs is missing.
fn convert(script: &str, input: &str) -> Option<String> {
    let mut child = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/recording"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let output = child.wait_with_output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn access_logs_convert_and_replay() {
    let dir = scratch("logs");
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, "[systems.sber]\n").unwrap();
    let nginx = "1796395661.294 0.012 200 0.013\n1796395661.300 0.051 503 0.052\n1796395661.400 - - 0.001\n1796395662.000 2.000 504 2.001\n";
    let envoy = concat!(
        r#"{"start_time":"2026-12-04T14:33:28.123Z","duration":"12","response_code":"200","response_flags":"-","upstream_cluster":"sber"}"#,
        "\n",
        r#"{"start_time":"2026-12-04T14:33:28.200Z","duration":3,"response_code":0,"response_flags":"UF","upstream_cluster":"sber"}"#,
        "\n",
        r#"{"start_time":"2026-12-04T14:33:28.300Z","duration":"0","response_code":"503","response_flags":"UO","upstream_cluster":"sber"}"#,
        "\n",
    );
    let cases = [
        // A 504 is an answer the client got after 2 s: a failure, not a hang.
        (
            "awk -v name=sber -f nginx.awk",
            nginx,
            ["success", "failure", "failure", "failure"].as_slice(),
        ),
        (
            "jq -c -f envoy.jq",
            envoy,
            ["success", "failure", "rejected"].as_slice(),
        ),
    ];
    for (script, input, outcomes) in cases {
        let Some(converted) = convert(script, input) else {
            eprintln!("skipped: `{script}` cannot run here");
            continue;
        };
        let lines: Vec<Value> = converted
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let seen: Vec<&str> = lines
            .iter()
            .map(|l| l["outcome"].as_str().unwrap())
            .collect();
        assert_eq!(seen, outcomes, "{script}");
        let path = dir.join("calls.jsonl");
        std::fs::write(&path, converted).unwrap();
        let report = json(bin().args([
            "replay",
            path.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
            "--json",
            "--strict",
        ]));
        assert_eq!(
            report["systems"]["sber"]["calls"],
            outcomes.len(),
            "{script}"
        );
    }
}

#[test]
fn a_call_refused_just_before_the_open_period_ends_is_refused_in_the_replay_too() {
    // The live breaker opened at .003 for 1 s and refused a call at 1.0023, 0.7 ms before
    // the period ended; its first trial, at 1.010, succeeded and closed it.
    let dir = scratch("exact");
    let settings = dir.join("s.toml");
    std::fs::write(
        &settings,
        "[systems.s]\ncb_window_size = 2\ncb_min_calls = 2\ncb_failure_rate = 0.5\ncb_open_duration = \"1s\"\ncb_half_open_calls = 1\n",
    )
    .unwrap();
    let recording = dir.join("r2.jsonl");
    std::fs::write(
        &recording,
        concat!(
            r#"{"system":"s","start":1796400000000.000,"duration_ms":1.000,"outcome":"failure"}"#,
            "\n",
            r#"{"system":"s","start":1796400000002.000,"duration_ms":1.000,"outcome":"failure"}"#,
            "\n",
            r#"{"system":"s","start":1796400000003.000,"transition":"open","from":"closed","reason":"failure_rate","why":"s opened: 2 of 2 calls failed (100% ≥ 50%)"}"#,
            "\n",
            r#"{"system":"s","start":1796400001002.300,"duration_ms":0,"outcome":"rejected","cause":"open"}"#,
            "\n",
            r#"{"system":"s","start":1796400001003.000,"transition":"half_open","from":"open","reason":"open_elapsed","why":"s half-open after 1s"}"#,
            "\n",
            r#"{"system":"s","start":1796400001010.000,"duration_ms":1.0,"outcome":"success"}"#,
            "\n",
            r#"{"system":"s","start":1796400001011.000,"transition":"closed","from":"half_open","reason":"trials_succeeded","why":"s closed: 1/1 trials succeeded"}"#,
            "\n",
        ),
    )
    .unwrap();
    let report = json(bin().args([
        "replay",
        recording.to_str().unwrap(),
        "--settings",
        settings.to_str().unwrap(),
        "--json",
    ]));
    let s = &report["systems"]["s"];
    let live = common::transitions(&s["recorded_transitions"]);
    let replayed = common::transitions(&s["replays"][0]["transitions"]);
    let steps = |all: &[(String, String, f64)]| -> Vec<(String, String)> {
        all.iter().map(|(f, t, _)| (f.clone(), t.clone())).collect()
    };
    assert_eq!(steps(&replayed), steps(&live), "{replayed:?}");
    // To the recorder's microsecond: the replay's clock keeps it. (The breaker turns
    // half-open when the first call after its open period asks, at 1.010 here; these
    // hand-written lines say 1.003.)
    for ((_, to, r), (_, _, l)) in replayed.iter().zip(&live) {
        if to == "half_open" {
            assert!(r >= l, "half-open at {r} ms, before {l} ms");
        } else {
            assert!((r - l).abs() < 0.001, "replayed at {r} ms, live at {l} ms");
        }
    }
    let as_set = &s["replays"][0];
    assert_eq!(as_set["openings"].as_array().unwrap().len(), 1);
    // The refused call is refused again, counted healthy or failing as its guessed
    // answer goes (the draws' median says which).
    let refused = |key: &str| as_set[key].as_u64().unwrap();
    assert_eq!(refused("healthy_refused") + refused("failing_refused"), 1);
    assert_eq!(as_set["ran"], 3);
}
