//! An adaptive bulkhead recorded and replayed: a real guard in adaptive mode, the real
//! recorder, 32 callers in front of an upstream of 8 workers behind a queue whose
//! workers drop to 2 (tokio's paused clock); then `outbound-guard replay --strict` of
//! that file, whose reader (the replay's, unchanged by the limit's lines) reads every
//! line: the limit rides on the limits' line, whose `bulkhead_limit` a reader that does
//! not know it ignores.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::bin;
use outbound_guard::{Guards, Settings};
use outbound_guard_recorder::{Recorder, RecorderOptions};
use tokio::sync::Semaphore;
use tokio::time::Instant;

const SETTINGS: &str = "[systems.sber]\nbulkhead = \"adaptive\"\nconnect_timeout = \"300ms\"\nread_timeout = \"600ms\"\n";

/// Records 20 s of callers, the workers dropping from 8 to 2 at 8 s.
async fn record(settings: &Settings, path: &std::path::Path) {
    let recorder = Arc::new(Recorder::to_file(path, RecorderOptions::default()).unwrap());
    let guards = Guards::builder(settings).observer(recorder.clone()).build();
    let guard = guards.get("sber").unwrap().clone();
    let workers = Arc::new(Semaphore::new(8));
    let until = Instant::now() + Duration::from_secs(20);
    let callers: Vec<_> = (0..32)
        .map(|_| {
            let (guard, workers) = (guard.clone(), workers.clone());
            tokio::spawn(async move {
                while Instant::now() < until {
                    let workers = workers.clone();
                    let answer = guard
                        .call(async move {
                            let _worker = workers.acquire().await.unwrap();
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            Ok::<_, ()>(())
                        })
                        .await;
                    if answer.is_err() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let gone = workers.clone().acquire_many_owned(6).await.unwrap();
    for caller in callers {
        caller.await.unwrap();
    }
    drop(gone);
    recorder.flush();
}

#[tokio::test(start_paused = true)]
async fn a_recording_with_an_adaptive_limit_replays_with_no_line_it_cannot_read() {
    let dir = common::scratch("recorded-limit");
    let (settings_path, recording) = (dir.join("resilience.toml"), dir.join("calls.jsonl"));
    std::fs::write(&settings_path, SETTINGS).unwrap();
    record(&Settings::parse(SETTINGS, "inline").unwrap(), &recording).await;
    let text = std::fs::read_to_string(&recording).unwrap();
    let limits: Vec<u64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|l| l["bulkhead_limit"].as_u64())
        .collect();
    assert!(limits.len() >= 4, "{limits:?}");
    assert_eq!(
        limits[0], 2,
        "starts at a quarter of its 8 permits: {limits:?}"
    );
    assert!(
        limits.contains(&8) && *limits.last().unwrap() <= 3,
        "{limits:?}"
    );
    let output = bin()
        .arg("replay")
        .arg(&recording)
        .arg("--settings")
        .arg(&settings_path)
        .args(["--strict", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["bad_lines"], serde_json::json!([]), "{report:#}");
    let calls = text.lines().filter(|l| l.contains("\"outcome\"")).count();
    assert_eq!(report["calls"].as_u64(), Some(calls as u64), "{report:#}");
}
