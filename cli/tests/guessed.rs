//! A replay of a recording made by an enforcing breaker: the calls it refused have no
//! recorded outcome, and every figure they change is given as a range.
//!
//! The recording: a real guard (`cb_failure_rate = 0.3`) with the runtime's recorder,
//! on tokio's paused clock, in front of an upstream that fails exactly 2 calls in 5
//! (40%) for a minute between two healthy stretches. Its breaker opens and refuses most
//! of that minute. Replayed with a stricter (0.2) and a looser (0.6) rate: the looser
//! one would never have opened (40% < 60% in any window), so its estimate's interval
//! must include that, and it must not be shown refusing more healthy calls than the
//! stricter one.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::bin;
use serde_json::Value;

const SETTINGS: &str = r#"[systems.sber]
cb_window_size = 50
cb_min_calls = 10
cb_failure_rate = 0.3
cb_open_duration = "5s"
cb_half_open_calls = 3
read_timeout = "1s"
total_timeout = "2s"
connect_timeout = "0.5s"
"#;

/// Records the scenario into `path`.
async fn record(path: &std::path::Path) {
    let answered = Arc::new(AtomicU64::new(0));
    // 50 calls a second: 10 s healthy, 60 s failing 2 in 5, 20 s healthy.
    common::record_scripted(path, SETTINGS, 4_500, |i| {
        let failing_phase = (500..3_500).contains(&i);
        let answered = answered.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            // The upstream's own count of the calls it answered.
            let n = answered.fetch_add(1, Ordering::Relaxed);
            if failing_phase && matches!(n % 5, 1 | 3) {
                Err(())
            } else {
                Ok(())
            }
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_looser_rate_is_judged_by_ranges_not_by_refusals_answered_as_failures() {
    let dir = common::scratch("guessed");
    let recording = dir.join("calls.jsonl");
    record(&recording).await;
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, SETTINGS).unwrap();

    let output = bin()
        .args(["replay", recording.to_str().unwrap()])
        .args([
            "--settings",
            settings.to_str().unwrap(),
            "--json",
            "--strict",
            // Few replays of the ways: the debug build replays slowly.
            "--max-replays",
            "4",
        ])
        .args(["--compare", "cb_failure_rate=0.2"])
        .args(["--compare", "cb_failure_rate=0.6"])
        .output()
        .unwrap();
    let report = common::json_report(&output);
    let sber = &report["systems"]["sber"];
    // The live breaker refused most of the failing minute: those calls are unknown.
    let unknown = sber["unknown_calls"].as_u64().unwrap();
    assert!(unknown > 1_000, "{unknown} calls without an outcome");
    let replays = sber["replays"].as_array().unwrap();
    let (as_set, stricter, looser) = (&replays[0], &replays[1], &replays[2]);
    assert_eq!(looser["settings"], "cb_failure_rate=0.6");
    let range = |r: &Value, key: &str| -> Option<(u64, u64)> {
        let pair = r["ranges"][key].as_array()?;
        Some((pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap()))
    };
    let value = |r: &Value, key: &str| r[key].as_u64().unwrap();

    // Every figure's range, where every way was replayed, holds the figure shown.
    for r in replays.iter().filter(|r| r["ranges"]["every_way"] == true) {
        for key in [
            "failing_let_through",
            "healthy_refused",
            "failing_refused",
            "bulkhead_refused",
        ] {
            let (low, high) = range(r, key).unwrap();
            assert!(
                (low..=high).contains(&value(r, key)),
                "{}: {key} {} outside {low}–{high}",
                r["settings"],
                value(r, key)
            );
        }
    }
    // The truth for 0.6: never opened. Its best estimate, from the calls on both
    // sides of each gap (40% failing), says so.
    assert_eq!(
        looser["openings"].as_array().unwrap().len(),
        0,
        "{:?}",
        looser["openings"]
    );
    // Not shown refusing more healthy calls than the stricter 0.2.
    let (looser_healthy, stricter_healthy) = (
        value(looser, "healthy_refused"),
        value(stricter, "healthy_refused"),
    );
    assert!(
        looser_healthy <= stricter_healthy,
        "0.6 refuses {looser_healthy}, 0.2 {stricter_healthy}"
    );
    // The setting it was recorded with refuses the calls the live breaker refused, so it
    // asks for no answer: one replay, and ranges that hold every way.
    assert_eq!(as_set["ranges"]["every_way"], true, "{}", as_set["ranges"]);
    assert_eq!(as_set["ranges"]["ways_replayed"], 1);
    assert_eq!(as_set["guessed"]["ran"], 0);
    // The looser one lets them run: too many ways, and its ranges say so; past the
    // replays made no range is given (never the range of the few replays made), and
    // its openings are the estimate with its error, whose interval holds the truth
    // (never opened), or "cannot tell".
    assert_eq!(looser["ranges"]["every_way"], false);
    assert!(range(looser, "openings").is_none(), "{}", looser["ranges"]);
    let openings = &looser["verdicts"]["openings"]["this"];
    match openings["certainty"].as_str() {
        Some("estimated") => assert_eq!(openings["low"], 0, "{openings}"),
        Some("cannot tell") => {}
        other => panic!("openings {other:?}: {openings}"),
    }
    // Each of its figures that rests on guessed answers says so, against the settings
    // it ran with; none is called exact.
    let verdicts = &looser["verdicts"];
    for key in ["failing_let_through", "healthy_refused", "waited_ms"] {
        let this = &verdicts[key]["this"]["certainty"];
        assert_ne!(this, "exact", "{key}: {verdicts}");
    }
    assert!(
        as_set.get("verdicts").is_none(),
        "the base has no verdict of its own"
    );
    // The setting it was recorded with opens as it did live.
    let live_openings = sber["recorded_transitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["to"] == "open")
        .count();
    assert_eq!(
        as_set["openings"].as_array().unwrap().len(),
        live_openings,
        "{as_set}"
    );
    // `KEEP_GUESSED=1` keeps the recording and its settings to look at.
    if std::env::var_os("KEEP_GUESSED").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
