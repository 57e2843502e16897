//! The estimate against the truth. The same scripted traffic is recorded twice by a
//! real guard with the recorder, on tokio's paused clock: once enforcing (the calls its
//! breaker refused have no outcome, and a replay that lets them run estimates them) and
//! once in observe mode (every call ran: a replay of it is exact, the truth). Each
//! call's answer is the script's, by its number, so both recordings meet the same
//! upstream. For stricter and looser settings, every figure replayed from the enforcing
//! recording must be the truth where it says exact, and hold it within the interval
//! its stated error allows where it says estimated; where it says it cannot tell, it
//! says nothing to hold.
//!
//! Four upstreams: a steady 40% error rate for a minute, a hang whose trials keep
//! failing, a short burst of failures, and a slow degradation to 80%.
//! `ESTIMATE_TABLE=1` prints each case's figures, truth beside estimate.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::bin;
use serde_json::Value;

/// The settings the service ran with (`cb_mode` added for the observe recording).
const SETTINGS: &str = r#"[systems.sber]
cb_window_size = 50
cb_min_calls = 10
cb_failure_rate = 0.3
cb_open_duration = "5s"
cb_half_open_calls = 3
read_timeout = "1s"
total_timeout = "2s"
connect_timeout = "0.5s"
# Room for every call of a hang (2 s at 50 a second): the bulkhead refuses none, even
# in observe mode, so the observe recording has every call's outcome.
max_connections = 500
"#;

/// The settings each case is replayed with beside the ones it ran with.
const ALTERNATIVES: [&str; 4] = [
    "cb_failure_rate=0.2",
    "cb_failure_rate=0.6",
    "cb_open_duration=2s",
    "cb_open_duration=15s",
];

/// What the scripted upstream answers one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ok,
    Fail,
    /// No answer: the guard's `total_timeout` cuts it.
    Hang,
}

/// A call every 20 ms (50 a second); `answer(n)` for the n-th.
struct Case {
    name: &'static str,
    calls: u32,
    answer: fn(u32) -> Answer,
}

/// 2 in 5 failing from the 10th second to the 70th.
fn steady(n: u32) -> Answer {
    if (500..3_500).contains(&n) && matches!(n % 5, 1 | 3) {
        Answer::Fail
    } else {
        Answer::Ok
    }
}

/// No answer from the 10th second to the 50th.
fn hang(n: u32) -> Answer {
    if (500..2_500).contains(&n) {
        Answer::Hang
    } else {
        Answer::Ok
    }
}

/// Every call failing for 3 s from the 10th second.
fn burst(n: u32) -> Answer {
    if (500..650).contains(&n) {
        Answer::Fail
    } else {
        Answer::Ok
    }
}

/// The share failing rising from 0 to 80% between the 10th second and the 70th, the
/// failures spread evenly; healthy again after.
fn degrading(n: u32) -> Answer {
    if !(500..3_500).contains(&n) {
        return Answer::Ok;
    }
    let share = |k: u32| 0.8 * f64::from(k - 500) / 3_000.0;
    // A failure wherever the running sum of the share passes a whole number.
    let sum = |k: u32| (500..k).map(share).sum::<f64>();
    if sum(n + 1).floor() > sum(n).floor() {
        Answer::Fail
    } else {
        Answer::Ok
    }
}

const CASES: [Case; 4] = [
    Case {
        name: "a steady 40% for a minute",
        calls: 4_500,
        answer: steady,
    },
    Case {
        name: "a hang with cycling trials",
        calls: 3_500,
        answer: hang,
    },
    Case {
        name: "a short burst",
        calls: 1_500,
        answer: burst,
    },
    Case {
        name: "a slow degradation",
        calls: 4_500,
        answer: degrading,
    },
];

/// Records `case` into `path` through a guard of `settings`.
async fn record(path: &Path, settings: &str, case: &Case) {
    common::record_scripted(path, settings, case.calls, |n| {
        let answer = (case.answer)(n);
        async move {
            match answer {
                Answer::Ok => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Ok(())
                }
                Answer::Fail => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Err(())
                }
                Answer::Hang => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    Ok(())
                }
            }
        }
    })
    .await;
}

/// `replay --json` of `recording` with the alternatives: its system's report.
fn replay(recording: &Path, settings: &Path) -> Value {
    let mut command = bin();
    command
        .args(["replay", recording.to_str().unwrap()])
        .args([
            "--settings",
            settings.to_str().unwrap(),
            "--json",
            "--strict",
        ])
        // Few replays of the ways: the estimate is what is checked here.
        .args(["--max-replays", "2"]);
    for alternative in ALTERNATIVES {
        command.args(["--compare", alternative]);
    }
    let report = common::json_report(&command.output().unwrap());
    report["systems"]["sber"].clone()
}

/// One figure of one setting: what the enforcing recording says of it, and the truth.
#[derive(Debug)]
struct Judged {
    setting: String,
    figure: String,
    truth: f64,
    /// The estimate's value (or the exact one).
    value: f64,
    /// `exact`, `estimated` or `cannot tell`.
    certainty: String,
    /// The interval it says the truth lies in (the value, for an exact one).
    low: f64,
    high: f64,
    /// The guessed answers behind it.
    guessed: f64,
}

/// Milliseconds or a count; `never` (`null`) as infinity.
fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::INFINITY)
}

/// Each alternative's figures and times to fast fail as `estimated` says them, against
/// `truth`'s.
fn judged(estimated: &Value, truth: &Value) -> Vec<Judged> {
    let mut out = Vec::new();
    let (ours, theirs) = (
        estimated["replays"].as_array().unwrap(),
        truth["replays"].as_array().unwrap(),
    );
    for (e, t) in ours.iter().zip(theirs).skip(1) {
        let setting = e["settings"].as_str().unwrap().to_owned();
        let verdicts = &e["verdicts"];
        let one = |figure: String, value: f64, truth: f64, this: &Value| {
            let certainty = this["certainty"].as_str().unwrap().to_owned();
            let (low, high) = if certainty == "estimated" {
                (number(&this["low"]), number(&this["high"]))
            } else {
                (value, value)
            };
            Judged {
                setting: setting.clone(),
                figure,
                truth,
                value,
                certainty,
                low,
                high,
                guessed: this["guessed"].as_f64().unwrap_or(0.0),
            }
        };
        for key in ["failing_let_through", "healthy_refused", "waited_ms"] {
            out.push(one(
                key.to_owned(),
                number(&e[key]),
                number(&t[key]),
                &verdicts[key]["this"],
            ));
        }
        let incidents = e["incidents"].as_array().unwrap();
        for (i, incident) in incidents.iter().enumerate() {
            out.push(one(
                format!("to_fast_fail_ms of incident {}", i + 1),
                number(&incident["to_fast_fail_ms"]),
                number(&t["incidents"][i]["to_fast_fail_ms"]),
                &verdicts["to_fast_fail"][i]["this"],
            ));
        }
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("estimate-{name}"))
}

#[tokio::test(start_paused = true)]
async fn the_estimate_holds_the_truth_of_an_observe_recording_within_its_stated_error() {
    let mut failures = Vec::new();
    for (k, case) in CASES.iter().enumerate() {
        let dir = scratch(&k.to_string());
        let settings = dir.join("resilience.toml");
        std::fs::write(&settings, SETTINGS).unwrap();
        let (enforcing, observing) = (dir.join("enforcing.jsonl"), dir.join("observing.jsonl"));
        record(&enforcing, SETTINGS, case).await;
        let observe = format!("{SETTINGS}cb_mode = \"observe\"\n");
        record(&observing, &observe, case).await;
        let (estimated, truth) = (replay(&enforcing, &settings), replay(&observing, &settings));
        assert_eq!(
            truth["unknown_calls"], 0,
            "{}: the truth guesses nothing",
            case.name
        );
        assert!(
            estimated["unknown_calls"].as_u64().unwrap() > 0,
            "{}: the enforcing guard refused nothing",
            case.name
        );
        assert_eq!(
            estimated["incidents"].as_array().unwrap().len(),
            truth["incidents"].as_array().unwrap().len(),
            "{}: the incidents are the upstream's: {} against {}",
            case.name,
            estimated["incidents"],
            truth["incidents"]
        );
        if std::env::var_os("ESTIMATE_TABLE").is_some() {
            eprintln!("\n{}", case.name);
        }
        for j in judged(&estimated, &truth) {
            if std::env::var_os("ESTIMATE_TABLE").is_some() {
                let error = (j.value - j.truth).abs();
                let share = if j.guessed > 0.0 && error.is_finite() {
                    format!("{:.0}%", 100.0 * error / j.guessed)
                } else {
                    "-".to_owned()
                };
                eprintln!(
                    "  {:<22} {:<32} truth {:>10.1}  said {:>10.1} {:<12} [{:.1}, {:.1}] guessed {:>5}  error/guessed {share}",
                    j.setting, j.figure, j.truth, j.value, j.certainty, j.low, j.high, j.guessed
                );
            }
            let holds = match j.certainty.as_str() {
                "cannot tell" => true,
                // Times in ms to the recorder's microsecond; counts exact.
                _ => j.low - 0.01 <= j.truth && j.truth <= j.high + 0.01,
            };
            if !holds {
                failures.push(format!("{}: {j:?}", case.name));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} figures outside what they said:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
