//! A hang recorded live and replayed: real HTTP calls on 127.0.0.1 (the demo's fake
//! upstream, a reqwest client whose timeout cuts each hung call) through a real guard
//! whose recorder writes every call and transition, on real time; then
//! `outbound-guard replay` of that file with the same settings.
//!
//! The hang lasts several open periods, each ended by a trial that fails again, and then
//! the upstream heals: the replay must open when the live breaker opened, each time in
//! order within [`TOLERANCE_MS`], and close within a second of its last close.

mod common;

use std::time::Duration;

use common::bin;
use outbound_guard_tests::upstream::{FakeUpstream, Fault};

/// How far a replayed opening may be from the live one.
const TOLERANCE_MS: f64 = 50.0;

/// Short real durations: a 100 ms read timeout, a 300 ms open period.
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
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_hang_replays_with_the_live_openings_and_close() {
    let dir = common::scratch("hang");
    let recorded = common::RecordedGuard::new(&dir, SETTINGS);
    let (guard, settings_path, recording) =
        (&recorded.guard, &recorded.settings, &recorded.recording);
    let upstream = FakeUpstream::start().await;
    let client = common::client(Duration::from_millis(100));
    let url = format!("{}/pay", upstream.url());
    let mut running = Vec::new();
    common::calls_for(
        Duration::from_millis(400),
        guard,
        &client,
        &url,
        &mut running,
    )
    .await;
    upstream.always(Fault::Hang);
    common::calls_for(Duration::from_secs(2), guard, &client, &url, &mut running).await;
    upstream.always(Fault::Ok);
    common::calls_for(Duration::from_secs(1), guard, &client, &url, &mut running).await;
    for call in running {
        call.await.unwrap();
    }
    recorded.flush();

    let output = bin()
        .args([
            "replay",
            recording.to_str().unwrap(),
            "--settings",
            settings_path.to_str().unwrap(),
            "--json",
            "--strict",
        ])
        .output()
        .unwrap();
    let report = common::json_report(&output);
    let s = &report["systems"]["s"];
    let live = common::transitions(&s["recorded_transitions"]);
    let replayed = common::transitions(&s["replays"][0]["transitions"]);
    let openings = |all: &[(String, String, f64)]| -> Vec<f64> {
        all.iter()
            .filter(|(_, to, _)| to == "open")
            .map(|(_, _, at)| *at)
            .collect()
    };
    let last_close = |all: &[(String, String, f64)]| -> f64 {
        all.iter()
            .rev()
            .find(|(_, to, _)| to == "closed")
            .map(|(_, _, at)| *at)
            .unwrap()
    };
    let (live_openings, replayed_openings) = (openings(&live), openings(&replayed));
    // The hang outlasts several open periods, each trial failing again.
    assert!(
        live_openings.len() >= 3,
        "the live breaker opened {} times: {live:?}",
        live_openings.len()
    );
    assert_eq!(
        replayed_openings.len(),
        live_openings.len(),
        "live {live:?}\nreplayed {replayed:?}"
    );
    for (r, l) in replayed_openings.iter().zip(&live_openings) {
        assert!(
            (r - l).abs() <= TOLERANCE_MS,
            "opened at {r} ms in the replay, {l} ms live\nlive {live:?}\nreplayed {replayed:?}"
        );
    }
    let (r, l) = (last_close(&replayed), last_close(&live));
    assert!(
        (r - l).abs() <= 1_000.0,
        "closed at {r} ms in the replay, {l} ms live"
    );
    // Printed for the record (`--nocapture`): the two side by side.
    for (i, l) in live.iter().enumerate() {
        eprintln!("live {l:?}  replayed {:?}", replayed.get(i));
    }
    // `KEEP_HANG=1` keeps the recording and its settings to look at.
    if std::env::var_os("KEEP_HANG").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
