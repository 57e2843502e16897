//! `outbound-guard replay` as a command: what it says, and how it ends, when the input,
//! the arguments or the output are not what it expects. Each runs the real binary on
//! real files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::bin;
use serde_json::{json, Value};

/// The demo's recording: thousands of lines of output in JSON.
const RECORDING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/demo-recording.jsonl"
);

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("command-{name}"))
}

/// A recording of `lines` and a settings file of `settings`, in `dir`.
fn files(dir: &Path, lines: &[&str], settings: &str) -> (String, String) {
    let recording = dir.join("calls.jsonl");
    std::fs::write(&recording, lines.join("\n") + "\n").unwrap();
    let file = dir.join("resilience.toml");
    std::fs::write(&file, settings).unwrap();
    (
        recording.to_str().unwrap().to_owned(),
        file.to_str().unwrap().to_owned(),
    )
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_directory_is_refused_in_one_line() {
    let dir = scratch("dir");
    let output = bin()
        .args(["replay", dir.to_str().unwrap()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is a directory"), "{err}");
    assert!(err.contains(dir.to_str().unwrap()), "{err}");
}

#[test]
fn a_closed_output_ends_the_replay_quietly() {
    for format in [&["--json"][..], &[][..]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_outbound-guard"))
            .args(["replay", RECORDING, "--max-replays", "2"])
            .args(format)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before a byte is written (`| head -0`).
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(output.status.code(), Some(0), "{format:?}: {err}");
    }
}

#[test]
fn out_refuses_a_file_it_would_not_write_as_named() {
    let dir = scratch("out");
    let png = dir.join("timeline.png");
    let output = bin()
        .args(["replay", RECORDING, "--out", png.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("--out"), "{err}");
    assert!(err.contains(".svg"), "{err}");
    assert!(!png.exists());
}

#[test]
fn one_is_singular() {
    let dir = scratch("singular");
    let (recording, settings) = files(
        &dir,
        &[
            r#"{"system":"s","start":1796400000000.000,"duration_ms":1.000,"outcome":"failure"}"#,
            "garbage",
            r#"{"system":"s","start":1796400000001.000,"transition":"open","from":"closed","reason":"failure_rate","why":"s opened"}"#,
        ],
        "[systems.s]\ncb_window_size = 1\ncb_min_calls = 1\n",
    );
    let output = bin()
        .args(["replay", &recording, "--settings", &settings])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // The breaker's own reasons ("1 of 1 calls failed") are the runtime's words.
    let ours: String = out.lines().filter(|l| !l.contains("opened:")).collect();
    for wrong in ["1 times", "1 calls", "1 lines", "1 incidents", "1 runs"] {
        assert!(!ours.contains(wrong), "{wrong:?} in\n{out}");
    }
    assert!(out.contains("1 call of 1 system"), "{out}");
    assert!(out.contains("1 line skipped"), "{out}");
    assert!(out.contains("opened once"), "{out}");
}

#[test]
fn a_misspelt_compare_key_gets_a_suggestion() {
    let output = bin()
        .args(["replay", RECORDING, "--compare", "cb_failure_rat=0.3"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean `cb_failure_rate`?"), "{err}");
}

#[test]
fn a_start_out_of_range_names_its_line_and_messages_give_our_line_only() {
    let dir = scratch("start");
    let (recording, settings) = files(
        &dir,
        &[
            r#"{"system":"s","start":1796400000000.000,"duration_ms":1.000,"outcome":"success"}"#,
            r#"{"system":"s","start":1e30,"duration_ms":1.000,"outcome":"success"}"#,
            r#"{"system":"s","start":1796400000002.000,"duration_ms":1.000,"outcome":"success"} trailing"#,
        ],
        "[systems.s]\n",
    );
    let output = bin()
        .args(["replay", &recording, "--settings", &settings])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("line 2: `start` 1e30"), "{err}");
    assert!(err.contains("line 3: not a record"), "{err}");
    assert!(!err.contains("line 1 column"), "{err}");
    let strict = bin()
        .args(["replay", &recording, "--settings", &settings, "--strict"])
        .output()
        .unwrap();
    let err = stderr(&strict);
    assert_eq!(strict.status.code(), Some(1), "{err}");
    assert!(err.contains("line 2: `start` 1e30"), "{err}");
}

#[test]
fn related_keys_change_together_in_one_alternative() {
    let dir = scratch("together");
    let (recording, settings) = files(
        &dir,
        &[r#"{"system":"s","start":1796400000000.000,"duration_ms":1.000,"outcome":"success"}"#],
        "[systems.s]\nconnect_timeout = 0.5\nread_timeout = 1\ntotal_timeout = 1.5\n",
    );
    // One key alone breaks the ordering: refused, naming the alternative.
    let alone = bin()
        .args(["replay", &recording, "--settings", &settings])
        .args(["--compare", "read_timeout=5"])
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(2), "{}", stderr(&alone));
    assert!(stderr(&alone).contains("--compare read_timeout=5"));
    let output = bin()
        .args(["replay", &recording, "--settings", &settings, "--json"])
        .args(["--compare", "read_timeout=5,total_timeout=6"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let labels: Vec<&str> = report["systems"]["s"]["replays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["settings"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["as set", "read_timeout=5,total_timeout=6"]);
}

/// The shape of a JSON value: its keys, and the shape of each value, with arrays
/// reduced to their first element's shape and scalars to their type.
fn shape(value: &Value) -> Value {
    match value {
        // Keyed by the figures that cannot be told: its keys are data, not shape.
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if k == "cannot_tell_why" {
                        Value::Object(serde_json::Map::new())
                    } else {
                        shape(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(all) => Value::Array(all.first().map(shape).into_iter().collect()),
        Value::Number(_) => Value::String("number".into()),
        Value::String(_) => Value::String("string".into()),
        Value::Bool(_) => Value::String("bool".into()),
        Value::Null => Value::String("null".into()),
    }
}

/// Keys whose value may be `null` or a number: their shapes are compared as either.
fn loosen(value: &mut Value) {
    match value {
        Value::Object(map) => map.values_mut().for_each(loosen),
        Value::Array(all) => all.iter_mut().for_each(loosen),
        Value::String(s) if s == "null" || s == "number" => *s = "number or null".into(),
        _ => {}
    }
}

#[test]
fn the_json_has_the_shape_the_reference_documents() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/replay.md")).unwrap();
    let marker = "<!-- replay --json -->";
    let from = readme
        .find(marker)
        .expect("docs/replay.md shows `replay --json`")
        + marker.len();
    let block = &readme[from..];
    let block = &block[block.find("```json").unwrap() + 7..];
    let block = &block[..block.find("```").unwrap()];
    let documented: Value = serde_json::from_str(block).unwrap();
    // Every array of the report has an element: six failures in a second (an
    // incident) that open the breaker, a line that is not a record, a system without
    // a table; and every object its keys: calls the breaker refused after a second,
    // when the replayed one is half-open again and asks their answers, past a budget
    // of one replay (so, as in the documented output, no range is given: `null`).
    let mut lines: Vec<String> = (0..6)
        .map(|i| {
            format!(
                r#"{{"system":"s","start":{}.000,"duration_ms":1.000,"outcome":"failure"}}"#,
                1_796_400_000_000_u64 + i * 100
            )
        })
        .collect();
    lines.push(r#"{"system":"s","start":1796400000101.000,"transition":"open","from":"closed","reason":"failure_rate","why":"s opened: 2 of 2 calls failed (100% ≥ 50%)"}"#.to_owned());
    lines.push(
        r#"{"system":"x","start":1796400000101.000,"duration_ms":1.000,"outcome":"success"}"#
            .to_owned(),
    );
    lines.push("garbage".to_owned());
    for i in 0..4 {
        lines.push(format!(
            r#"{{"system":"s","start":{}.000,"duration_ms":0,"outcome":"rejected","cause":"open"}}"#,
            1_796_400_001_200_u64 + i * 100
        ));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let dir = scratch("shape");
    let (recording, settings) = files(
        &dir,
        &lines,
        "[systems.s]\ncb_window_size = 2\ncb_min_calls = 2\ncb_open_duration = \"1s\"\n",
    );
    let output = bin()
        .args(["replay", &recording, "--settings", &settings, "--json"])
        .args(["--max-replays", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let actual: Value = serde_json::from_slice(&output.stdout).unwrap();
    let (mut want, mut got) = (shape(&documented), shape(&actual));
    loosen(&mut want);
    loosen(&mut got);
    // The systems are keyed by name: compare the one system's shape, and the rest.
    let split = |v: &Value| {
        let mut top = v.clone();
        let systems = top.as_object_mut().unwrap().remove("systems").unwrap();
        let one = systems
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .clone();
        (top, one)
    };
    let ((got_top, got_one), (want_top, want_one)) = (split(&got), split(&want));
    assert_eq!(got_one, want_one, "a system's shape");
    assert_eq!(got_top, want_top, "the top level's shape");
}

/// A gzipped recording is read as it is, from a file or from stdin: the same answer as
/// the plain one.
#[test]
fn a_gzipped_recording_is_read_as_it_is() {
    use std::io::Write as _;
    let plain = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/demo-recording.jsonl"
    );
    let text = std::fs::read(plain).unwrap();
    let dir = scratch("gzip");
    let gz = dir.join("day.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    let answer = |recording: &str, stdin: Option<&Path>| {
        let mut command = bin();
        command.args([
            "replay",
            recording,
            "--system",
            "sber",
            "--max-replays",
            "1",
        ]);
        if let Some(path) = stdin {
            command.write_stdin(std::fs::read(path).unwrap());
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(stderr(&output).is_empty(), "{}", stderr(&output));
        // The first line names the recording, and folds where its name ends.
        let out = String::from_utf8(output.stdout).unwrap();
        let words: Vec<&str> = out.split_once(':').unwrap().1.split_whitespace().collect();
        words.join(" ")
    };
    let expected = answer(plain, None);
    assert_eq!(answer(gz.to_str().unwrap(), None), expected);
    assert_eq!(answer("-", Some(&gz)), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Six calls in flight at once: `n` calls of 30 ms, one every 5 ms.
fn overlapping(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                r#"{{"system":"s","start":{:.3},"duration_ms":30.000,"outcome":"success"}}"#,
                1_796_400_000_000.0 + 5.0 * i as f64
            )
        })
        .collect()
}

/// An adaptive bulkhead's limit follows the latency the calls in flight cause; a
/// recording's latencies did not react to the replayed calls, so where more calls than
/// its floor were in flight at once, every figure cannot be told, with why; where the
/// floor is never reached, the limit never binds and the replay holds.
#[test]
fn an_adaptive_bulkhead_above_its_floor_cannot_be_told() {
    let dir = scratch("adaptive");
    let lines = overlapping(40);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let fixed = "[systems.s]\nmax_connections = 10\n";
    let (recording, settings) = files(&dir, &lines, fixed);
    let output = bin()
        .args(["replay", &recording, "--settings", &settings, "--json"])
        .args(["--compare", "bulkhead=adaptive"])
        .args(["--compare", "bulkhead=adaptive,bulkhead_floor=8"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let replays = report["systems"]["s"]["replays"].as_array().unwrap();
    let why = |i: usize| replays[i]["cannot_tell"].as_array().unwrap().clone();
    assert!(why(0).is_empty(), "{:?}", why(0));
    assert!(
        why(2).is_empty(),
        "a floor of 8 is never reached: {:?}",
        why(2)
    );
    let reason = why(1)[0].as_str().unwrap().to_owned();
    assert!(
        reason.starts_with(
            "bulkhead = \"adaptive\" moves its limit between bulkhead_floor = 1 and 8 permits"
        ) && reason.contains("up to 6 calls may be in flight at once"),
        "{reason}"
    );
    assert_eq!(replays[1]["openings"], Value::Null);
    assert_eq!(replays[0]["openings"], json!([]));
    for figure in [
        "failing_let_through",
        "healthy_refused",
        "waited_ms",
        "bulkhead_refused",
    ] {
        assert_eq!(replays[1][figure], Value::Null, "{figure}");
        assert_eq!(
            replays[1]["cannot_tell_why"][figure],
            reason.as_str(),
            "{figure}"
        );
        assert_ne!(replays[0][figure], Value::Null, "{figure}");
    }

    // The settings as run, adaptive: cannot be told, in words on the screen.
    let adaptive =
        "[systems.s]\nmax_connections = 10\nbulkhead = \"adaptive\"\nbulkhead_floor = 2\n";
    std::fs::write(&settings, adaptive).unwrap();
    let screen = bin()
        .args(["replay", &recording, "--settings", &settings])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&screen.stdout);
    assert!(
        text.contains("as set: cannot tell: bulkhead = \"adaptive\" moves its limit between bulkhead_floor = 2"),
        "{text}"
    );

    // tune neither claims a figure for it nor proposes the key.
    let tune = bin()
        .args(["tune", &recording, "--settings", &settings, "--json"])
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&tune.stdout).unwrap();
    let s = &answer["systems"]["s"];
    assert_eq!(s["recommended"], Value::Null);
    assert_eq!(s["as_set"]["meets_every_objective"], false);
    assert_eq!(s["as_set"]["waited_ms"], Value::Null);
    assert!(s["as_set"]["figures"]["healthy_refused"]["cannot_tell"]
        .as_str()
        .unwrap()
        .starts_with("bulkhead = \"adaptive\""));
    let searched = s["searched"].to_string();
    assert!(!searched.contains("bulkhead"), "{searched}");
}
