//! A breaker rolled out in observe mode, recorded live and replayed: real HTTP calls on
//! 127.0.0.1 (the demo's fake upstream, a reqwest client whose timeout cuts each hung
//! call) through a real guard with `cb_mode = "observe"` and the recorder, on real
//! time; then `outbound-guard replay` of that file.
//!
//! Observing, the breaker refuses nothing: every call reaches the upstream and is
//! recorded with its real outcome, so a replay guesses nothing, for any settings. With
//! the recording's own settings the replay (which enforces) opens when the observing
//! breaker said it would have, in order within [`TOLERANCE_MS`].

mod common;

use std::time::Duration;

use common::bin;
use outbound_guard_tests::upstream::{FakeUpstream, Fault};
use serde_json::Value;

/// How far a replayed opening may be from the live one.
const TOLERANCE_MS: f64 = 50.0;

const SETTINGS: &str = r#"[systems.s]
connect_timeout = "50ms"
read_timeout = "100ms"
total_timeout = "200ms"
cb_slow_threshold = "150ms"
cb_window_size = 4
cb_min_calls = 4
cb_failure_rate = 0.5
cb_open_duration = "300ms"
cb_half_open_calls = 1
max_connections = 100
cb_mode = "observe"
"#;

fn openings(all: &Value) -> Vec<f64> {
    all.as_array()
        .unwrap()
        .iter()
        .filter(|t| t["to"] == "open")
        .map(|t| t["at_ms"].as_f64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_observed_recording_has_every_real_outcome_and_replays_without_a_guess() {
    let dir = common::scratch("observed");
    let recorded = common::RecordedGuard::new(&dir, SETTINGS);
    let (guard, settings_path, recording) =
        (&recorded.guard, &recorded.settings, &recorded.recording);
    let upstream = FakeUpstream::start().await;
    assert!(guard.breaker().peek().observing);
    let client = common::client(Duration::from_millis(100));
    let url = format!("{}/pay", upstream.url());
    let mut running = Vec::new();
    let ms = Duration::from_millis;
    common::calls_for(ms(300), guard, &client, &url, &mut running).await;
    upstream.always(Fault::Status(500));
    common::calls_for(ms(500), guard, &client, &url, &mut running).await;
    upstream.always(Fault::Hang);
    common::calls_for(ms(900), guard, &client, &url, &mut running).await;
    upstream.always(Fault::Ok);
    common::calls_for(ms(600), guard, &client, &url, &mut running).await;
    let made = running.len();
    for call in running {
        assert!(call.await.unwrap(), "observing: every call admitted");
    }
    recorded.flush();
    let would_have_refused = guard.breaker().snapshot().would_have_refused;
    assert!(would_have_refused > 20, "{would_have_refused}");

    // What the service recorded: every call with its real outcome, none refused; the
    // observe mode and each would-be transition marked.
    let text = std::fs::read_to_string(recording).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let calls: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("outcome").is_some())
        .collect();
    assert_eq!(calls.len(), made);
    assert_eq!(
        upstream.hits(),
        made as u64,
        "every call reached the upstream"
    );
    assert!(calls.iter().all(|c| c["outcome"] != "rejected"));
    for outcome in ["success", "failure"] {
        assert!(calls.iter().any(|c| c["outcome"] == outcome), "{outcome}");
    }
    // The hang: each call cut by the client's 100 ms read timeout is recorded as cut,
    // so that a replay knows it lasted at least that long; the limits come first.
    let cut: Vec<&&Value> = calls
        .iter()
        .filter(|c| c["cut"] == "read_timeout")
        .collect();
    assert!(cut.len() > 20, "{}", cut.len());
    assert!(cut
        .iter()
        .all(|c| c["outcome"] == "timeout" && c["duration_ms"].as_f64().unwrap() >= 100.0));
    assert!(calls
        .iter()
        .filter(|c| c["outcome"] == "failure")
        .all(|c| c["duration_ms"].as_f64().unwrap() < 100.0));
    let limits = lines
        .iter()
        .find(|l| l.get("read_timeout_ms").is_some())
        .unwrap();
    assert_eq!(limits["read_timeout_ms"].as_f64(), Some(100.0));
    assert_eq!(limits["total_timeout_ms"].as_f64(), Some(200.0));
    assert_eq!(lines[1]["observing"], true, "{}", lines[1]);
    let transitions: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("transition").is_some())
        .collect();
    assert!(transitions.len() >= 4, "{transitions:?}");
    assert!(transitions.iter().all(|t| t["observing"] == true));
    assert!(transitions[0]["why"]
        .as_str()
        .unwrap()
        .starts_with("s would have opened: "));

    let output = bin()
        .args([
            "replay",
            recording.to_str().unwrap(),
            "--settings",
            settings_path.to_str().unwrap(),
            "--compare",
            "cb_failure_rate=0.9",
            "--compare",
            "cb_open_duration=1",
            "--compare",
            "read_timeout=0.07",
            "--compare",
            "read_timeout=0.15",
            "--json",
            "--strict",
        ])
        .output()
        .unwrap();
    let report = common::json_report(&output);
    let s = &report["systems"]["s"];
    assert_eq!(s["observe_mode"], true);
    assert_eq!(s["unknown_calls"], 0, "nothing to guess");
    let replays = s["replays"].as_array().unwrap();
    assert_eq!(replays.len(), 5);
    // A longer read_timeout than the recording's cannot be told: its hung calls never
    // answered within 100 ms, and nobody knows what they would have said at 150.
    let told = |i: usize| replays[i]["cannot_tell"].as_array().unwrap().is_empty();
    assert!((0..4).all(told), "{:?}", replays[3]["cannot_tell"]);
    let why = replays[4]["cannot_tell"][0].as_str().unwrap();
    assert!(
        why.starts_with("read_timeout = 150 ms is longer than the recording's 100 ms: "),
        "{why}"
    );
    // A shorter one can: the calls that had not answered within 70 ms fail at 70 ms.
    assert!(
        replays[3]["openings"].as_array().unwrap().len() >= 2,
        "{}",
        replays[3]["openings"]
    );
    for replay in replays {
        assert_eq!(replay["guessed"]["ran"], 0, "{}", replay["settings"]);
        for (key, range) in replay["ranges"].as_object().unwrap() {
            assert_eq!(
                range[0], range[1],
                "{key} of {}: one answer",
                replay["settings"]
            );
        }
    }
    // The replay enforces (observe is replayed as auto): it refuses, where the live
    // breaker would have.
    let refused = replays[0]["healthy_refused"].as_u64().unwrap()
        + replays[0]["failing_refused"].as_u64().unwrap();
    eprintln!("live: would have refused {would_have_refused}; replayed: refused {refused}");
    assert!(refused > 20, "{refused}");
    let (live, replayed) = (
        openings(&s["recorded_transitions"]),
        openings(&replays[0]["transitions"]),
    );
    assert!(live.len() >= 2, "{live:?}");
    assert_eq!(
        live.len(),
        replayed.len(),
        "live {live:?}\nreplayed {replayed:?}"
    );
    for (r, l) in replayed.iter().zip(&live) {
        assert!(
            (r - l).abs() <= TOLERANCE_MS,
            "opened at {r} ms in the replay, {l} ms live\nlive {live:?}\nreplayed {replayed:?}"
        );
    }
    for (l, r) in live.iter().zip(&replayed) {
        eprintln!("would have opened at {l} ms live; opened at {r} ms replayed");
    }

    let table = bin()
        .args([
            "replay",
            recording.to_str().unwrap(),
            "--settings",
            settings_path.to_str().unwrap(),
            "--compare",
            "read_timeout=0.15",
            "--out",
            dir.join("timeline.svg").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    // The picture names the recording's breaker as what it would have been, and the
    // setting it cannot tell as such.
    let svg = std::fs::read_to_string(dir.join("timeline.svg")).unwrap();
    for words in [
        "recorded (would be)",
        "replayed: read_timeout=0.15 (cannot tell)",
    ] {
        assert!(svg.contains(words), "{words}");
    }
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("its breaker observed (would have opened"),
        "{table}"
    );
    assert!(table.contains("refusing none"), "{table}");
    assert!(
        table.contains(
            "read_timeout=0.15: cannot tell: read_timeout = 150 ms is longer than the recording's"
        ),
        "{table}"
    );
    assert!(!table.contains("guessed"), "{table}");
    assert!(!table.contains("estimated"), "{table}");
    // `KEEP_OBSERVED=1` keeps the recording and its settings to look at.
    if std::env::var_os("KEEP_OBSERVED").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
