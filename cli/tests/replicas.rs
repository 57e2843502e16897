//! Replicas fill each other's gaps: two instances of a service call one real upstream
//! (the demo's fake, HTTP on 127.0.0.1, real time), each through its own guard and
//! recorder. The upstream fails every call for a second; replica `a`'s breaker opens
//! on the burst's first failures and stays open for 2 s, over the rest of the burst and
//! the upstream's recovery; replica `b`'s (a window larger than all its calls) never
//! opens, so it records the real outcome of every call.
//!
//! Replayed alone, `a`'s recording has a gap of about 200 refused calls, answered by
//! a guess that moves from the few failures before it (what opened the breaker, among
//! successes) to the successful trial after it: a fraction of them failing, where the
//! upstream failed half of them. Replayed with `--replica b.jsonl`, `b`'s calls at the
//! same times answer them, as the upstream really did. A setting that never opens is
//! then judged on real outcomes: its failing calls let through come close to the
//! truth (`b`'s), where the guess alone is far from it.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{bin, json_report};
use outbound_guard::{Guard, Settings};
use outbound_guard_recorder::{Recorder, RecorderOptions};
use outbound_guard_tests::upstream::{FakeUpstream, Fault};
use serde_json::Value;

const A: &str = r#"[systems.s]
connect_timeout = "50ms"
read_timeout = "200ms"
total_timeout = "300ms"
cb_window_size = 4
cb_min_calls = 4
cb_failure_rate = 0.5
cb_open_duration = "2s"
cb_half_open_calls = 1
max_connections = 100
"#;

/// `b`: a window larger than the calls it makes.
const B_KEYS: &str = "cb_window_size=400,cb_min_calls=400";

/// The recording's lines whose `key` is `value`.
fn recorded(path: &std::path::Path, key: &str, value: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l[key] == value)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_ran_the_calls_answers_the_gap_of_one_that_refused_them() {
    let dir = common::scratch("replicas");
    let settings_path = dir.join("resilience.toml");
    std::fs::write(&settings_path, A).unwrap();
    let b_text = A
        .replace("cb_window_size = 4", "cb_window_size = 400")
        .replace("cb_min_calls = 4", "cb_min_calls = 400");
    let (a_path, b_path) = (dir.join("a.jsonl"), dir.join("b.jsonl"));

    let upstream = FakeUpstream::start().await;
    let url = format!("{}/pay", upstream.url());
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(50))
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let replica = |text: &str, path: &std::path::Path| {
        let settings = Settings::parse(text, "resilience.toml").unwrap();
        let recorder = Arc::new(Recorder::to_file(path, RecorderOptions::default()).unwrap());
        let guard = Guard::builder(settings.system("s").unwrap())
            .observer(recorder.clone())
            .build();
        (guard, recorder)
    };
    let (a, a_recorder) = replica(A, &a_path);
    let (b, b_recorder) = replica(&b_text, &b_path);
    let mut running = Vec::new();
    let mut tick = tokio::time::interval(common::EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ms = Duration::from_millis;
    for (fault, phase) in [
        (Fault::Ok, ms(300)),
        (Fault::Status(500), ms(1_000)),
        (Fault::Ok, ms(1_700)),
    ] {
        upstream.always(fault);
        let end = tokio::time::Instant::now() + phase;
        while tokio::time::Instant::now() < end {
            tick.tick().await;
            running.push(tokio::spawn(common::guarded_get(&a, &client, &url)));
            running.push(tokio::spawn(common::guarded_get(&b, &client, &url)));
        }
    }
    for call in running {
        call.await.unwrap();
    }
    a_recorder.flush();
    b_recorder.flush();
    assert!(recorded(&a_path, "transition", "open") >= 1, "a opened");
    assert_eq!(recorded(&b_path, "transition", "open"), 0, "b never opened");
    // b ran every call: its failures are the burst's, the truth of a setting that
    // never opens.
    let truth = recorded(&b_path, "outcome", "failure");
    assert!(truth >= 10, "{truth}");

    let replay = |replica: bool| {
        let mut command = bin();
        command.args([
            "replay",
            a_path.to_str().unwrap(),
            "--settings",
            settings_path.to_str().unwrap(),
            "--compare",
            B_KEYS,
            "--json",
            "--strict",
            "--max-replays",
            "8",
        ]);
        if replica {
            command.args(["--replica", b_path.to_str().unwrap()]);
        }
        json_report(&command.output().unwrap())
    };
    let (alone, filled) = (replay(false), replay(true));
    let (alone, filled) = (&alone["systems"]["s"], &filled["systems"]["s"]);
    let unknown = alone["unknown_calls"].as_u64().unwrap();
    assert!(unknown >= 100, "a's gap: {unknown}");
    assert_eq!(alone["filled_by_replicas"], 0);
    let answered = filled["filled_by_replicas"].as_u64().unwrap();
    let left = filled["unknown_calls"].as_u64().unwrap();
    assert_eq!(answered + left, unknown);
    assert!(
        left * 10 <= unknown,
        "b answers nearly all: {left} of {unknown} left"
    );
    // The setting that never opens, judged on b's outcomes: close to the truth, where
    // the guess alone is far from it.
    let never = |report: &Value| {
        report["replays"][1]["failing_let_through"]
            .as_u64()
            .unwrap()
    };
    let (guessed, answered_figure) = (never(alone), never(filled));
    let off = |n: u64| n.abs_diff(truth as u64);
    eprintln!(
        "a's gap: {unknown} calls, {answered} answered by b; failing let through by a setting that never opens: truth {truth}, with b {}, alone {guessed}",
        never(filled)
    );
    assert!(
        off(answered_figure) * 3 < off(guessed),
        "truth {truth}: with the replica {answered_figure}, alone {guessed}"
    );
    assert!(
        off(answered_figure) <= 10,
        "truth {truth}, with the replica {answered_figure}"
    );
    // And the range, over the calls still without an outcome, holds it.
    let range = &filled["replays"][1]["ranges"]["failing_let_through"];
    assert!(range[0].as_u64().unwrap() <= answered_figure);
    assert!(answered_figure <= range[1].as_u64().unwrap());
}
