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
//! Each verdict against the settings it ran with (better, worse, same) must say what the
//! truth's two replays say.
//!
//! Six upstreams the estimate and its error were chosen on: a steady 40% error rate
//! for a minute, a hang whose trials keep failing, a short burst of failures, a slow
//! degradation to 80%, a flapping upstream (4 s failing of every 10), and a burst then
//! a hang (held out once; it failed, and the estimator was changed for it). Four held
//! out, not used to choose them: 40% then a hang, a flapping upstream of another period
//! (3 s of every 7), two bursts then a hang, a degradation and a recovery.
//! `ESTIMATE_TABLE=1` prints each case's figures, truth beside estimate, and its error.

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

/// 40% failing for 50 s from the 10th second, then no answer for a minute, then healthy.
fn forty_then_hang(n: u32) -> Answer {
    match n {
        500..3_000 if matches!(n % 5, 1 | 3) => Answer::Fail,
        3_000..6_000 => Answer::Hang,
        _ => Answer::Ok,
    }
}

/// Flapping: from the 10th second to the 90th, 4 s of every call failing, then 6 s
/// healthy, over and over.
fn flapping(n: u32) -> Answer {
    if (500..4_500).contains(&n) && (n - 500) % 500 < 200 {
        Answer::Fail
    } else {
        Answer::Ok
    }
}

/// The share failing rising from 0 to 70% over 40 s from the 10th second, staying
/// there 20 s, then falling back to none over 20 s; failures at random (seeded).
fn degrading_and_recovering(n: u32) -> Answer {
    let share = match n {
        500..2_500 => 0.7 * f64::from(n - 500) / 2_000.0,
        2_500..3_500 => 0.7,
        3_500..4_500 => 0.7 * f64::from(4_500 - n) / 1_000.0,
        _ => 0.0,
    };
    // A hash of the call's number, uniform in [0, 1).
    let h = u64::from(n)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29);
    let uniform = (h.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 11) as f64 / (1u64 << 53) as f64;
    if uniform < share {
        Answer::Fail
    } else {
        Answer::Ok
    }
}

/// Flapping again, another period: from the 10th second to the 80th, 3 s of every call
/// failing, then 4 s healthy.
fn flapping_every_seven(n: u32) -> Answer {
    if (500..4_000).contains(&n) && (n - 500) % 350 < 150 {
        Answer::Fail
    } else {
        Answer::Ok
    }
}

/// Every call failing for 3 s from the 10th second, healthy for 20 s, then no answer
/// for 30 s, then healthy.
fn burst_then_hang(n: u32) -> Answer {
    match n {
        500..650 => Answer::Fail,
        1_650..3_150 => Answer::Hang,
        _ => Answer::Ok,
    }
}

/// Every call failing for 3 s from the 10th second, again for 2 s from the 25th, then
/// no answer for 20 s from the 45th, then healthy.
fn two_bursts_then_hang(n: u32) -> Answer {
    match n {
        500..650 | 1_250..1_350 => Answer::Fail,
        2_250..3_250 => Answer::Hang,
        _ => Answer::Ok,
    }
}

/// Cases not used to choose the estimator or its error: each must hold as the fitted
/// ones do.
const HELD_OUT: [Case; 4] = [
    Case {
        name: "40% then a hang (held out)",
        calls: 10_500,
        answer: forty_then_hang,
    },
    Case {
        name: "a flapping upstream, every 7 s (held out)",
        calls: 4_500,
        answer: flapping_every_seven,
    },
    Case {
        name: "two bursts then a hang (held out)",
        calls: 4_500,
        answer: two_bursts_then_hang,
    },
    Case {
        name: "a degradation and a recovery (held out)",
        calls: 5_000,
        answer: degrading_and_recovering,
    },
];

const CASES: [Case; 6] = [
    Case {
        name: "a flapping upstream",
        calls: 5_000,
        answer: flapping,
    },
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
    Case {
        name: "a burst then a hang",
        calls: 4_000,
        answer: burst_then_hang,
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
    /// The least and greatest over the draws of the answers, where estimated.
    drawn: Option<(f64, f64)>,
    /// Its verdict against the settings it ran with, and the truth of those.
    verdict: String,
    truth_base: f64,
    /// The difference from the settings it ran with over the draws, where drawn.
    difference: Value,
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
    let truth_base = &theirs[0];
    for (e, t) in ours.iter().zip(theirs).skip(1) {
        let setting = e["settings"].as_str().unwrap().to_owned();
        let verdicts = &e["verdicts"];
        let one = |figure: String, (value, truth, truth_base): (f64, f64, f64), verdict: &Value| {
            let this = &verdict["this"];
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
                drawn: this["drawn"]
                    .as_array()
                    .map(|d| (number(&d[0]), number(&d[1]))),
                verdict: verdict["verdict"].as_str().unwrap().to_owned(),
                truth_base,
                difference: verdict["difference"].clone(),
            }
        };
        for key in ["failing_let_through", "healthy_refused", "waited_ms"] {
            out.push(one(
                key.to_owned(),
                (number(&e[key]), number(&t[key]), number(&truth_base[key])),
                &verdicts[key],
            ));
        }
        let incidents = e["incidents"].as_array().unwrap();
        let fast = |r: &Value, i: usize| number(&r["incidents"][i]["to_fast_fail_ms"]);
        for (i, incident) in incidents.iter().enumerate() {
            out.push(one(
                format!("to_fast_fail_ms of incident {}", i + 1),
                (
                    number(&incident["to_fast_fail_ms"]),
                    fast(t, i),
                    fast(truth_base, i),
                ),
                &verdicts["to_fast_fail"][i],
            ));
        }
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("estimate-{name}"))
}

/// Whether `verdict` says what the truth does: "better" or "worse" only where the
/// truth moved that way, "same" only where it did not move.
fn contradicts(verdict: &str, truth: f64, truth_base: f64) -> bool {
    // Times in ms to the recorder's microsecond; `never` equals `never`.
    let equal = truth == truth_base || (truth - truth_base).abs() <= 0.01;
    match verdict {
        "better" => equal || truth > truth_base,
        "worse" => equal || truth < truth_base,
        "same" => !equal,
        _ => false,
    }
}

/// Records `case` enforcing and in observe mode, replays both: each figure the
/// enforcing recording tells, judged against the observe recording's truth.
async fn judge_case(k: &str, case: &Case) -> Vec<Judged> {
    let dir = scratch(k);
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
    // `KEEP_ESTIMATE=1` keeps the recordings and the settings to look at.
    if std::env::var_os("KEEP_ESTIMATE").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    judged(&estimated, &truth)
}

/// What does not hold of `judged`: each interval that misses the truth, each verdict
/// that contradicts it. `ESTIMATE_TABLE=1` prints each figure, and the case's error.
fn failures(case: &Case, judged: &[Judged]) -> Vec<String> {
    let table = std::env::var_os("ESTIMATE_TABLE").is_some();
    if table {
        eprintln!("\n{}", case.name);
    }
    let mut failures = Vec::new();
    let (mut errors, mut beyond, mut told) = (Vec::new(), Vec::new(), 0);
    for j in judged {
        let error = (j.value - j.truth).abs();
        let count = ["failing_let_through", "healthy_refused"].contains(&j.figure.as_str());
        if j.certainty == "estimated" && count {
            errors.push(error / j.guessed.max(1.0));
            // How far beyond the draws' spread the truth lies, per guessed answer.
            if let Some((low, high)) = j.drawn {
                beyond.push((low - j.truth).max(j.truth - high).max(0.0) / j.guessed.max(1.0));
            }
        }
        told += usize::from(["better", "worse"].contains(&j.verdict.as_str()));
        if table {
            eprintln!(
                "  {:<22} {:<32} truth {:>10.1} (as set {:>10.1})  said {:>10.1} {:<12} [{:.1}, {:.1}] drawn {:?} guessed {:>5}  {} {}",
                j.setting, j.figure, j.truth, j.truth_base, j.value, j.certainty, j.low, j.high, j.drawn, j.guessed, j.verdict, j.difference
            );
        }
        let holds = match j.certainty.as_str() {
            "cannot tell" => true,
            _ => j.low - 0.01 <= j.truth && j.truth <= j.high + 0.01,
        };
        if !holds {
            failures.push(format!(
                "{}: outside: {} of {}",
                case.name, j.figure, j.setting
            ));
            failures.push(format!("  {j:?}"));
        }
        if contradicts(&j.verdict, j.truth, j.truth_base) {
            failures.push(format!(
                "{}: contradicted: {} of {}",
                case.name, j.figure, j.setting
            ));
            failures.push(format!("  {j:?}"));
        }
    }
    if table {
        let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
        let worst = errors.iter().copied().fold(0.0, f64::max);
        let past = beyond.iter().copied().fold(0.0, f64::max);
        eprintln!(
            "  counts' error per guessed answer: mean {mean:.2}, worst {worst:.2} over {} estimated; beyond the draws, worst {past:.2}; {told} of {} verdicts told",
            errors.len(),
            judged.len()
        );
    }
    failures
}

/// The verdict `judged` gives `setting` on `figure`.
fn verdict_of<'j>(judged: &'j [Judged], setting: &str, figure: &str) -> &'j Judged {
    judged
        .iter()
        .find(|j| j.setting == setting && j.figure == figure)
        .unwrap_or_else(|| panic!("no {figure} of {setting}"))
}

#[tokio::test(start_paused = true)]
async fn the_estimate_holds_the_truth_of_an_observe_recording_within_its_stated_error() {
    let mut all = Vec::new();
    for (k, case) in CASES.iter().enumerate() {
        all.extend(failures(case, &judge_case(&k.to_string(), case).await));
    }
    assert!(
        all.is_empty(),
        "{} figures outside what they said or contradicted:\n{}",
        all.len(),
        all.join("\n")
    );
}

/// What does not hold on the held-out cases (none): a held-out case that fails is
/// listed here, not refitted away; the test fails when one is added, and when one
/// holds again.
const HELD_OUT_MISSES: [&str; 0] = [];

/// Cases the estimator was not chosen on: no better or worse contradicts the truth,
/// every interval holds it but the [`HELD_OUT_MISSES`]; and on the 40%-then-hang run,
/// the differences that decide a change are told, the way the truth goes.
#[tokio::test(start_paused = true)]
async fn held_out_cases_hold_and_the_differences_that_decide_are_told() {
    let mut all = Vec::new();
    for (k, case) in HELD_OUT.iter().enumerate() {
        let judged = judge_case(&format!("held-out-{k}"), case).await;
        all.extend(failures(case, &judged));
        if k == 0 {
            for (setting, figure, word) in [
                ("cb_open_duration=2s", "failing_let_through", "worse"),
                ("cb_failure_rate=0.6", "failing_let_through", "worse"),
                ("cb_failure_rate=0.6", "healthy_refused", "better"),
            ] {
                let j = verdict_of(&judged, setting, figure);
                if j.verdict != word {
                    all.push(format!("{}: not told {word}: {j:?}", case.name));
                }
            }
        }
    }
    let misses: Vec<&str> = all
        .iter()
        .map(String::as_str)
        .filter(|f| !f.starts_with("  "))
        .collect();
    assert!(
        misses == HELD_OUT_MISSES,
        "{} failures on the held-out cases beside the known misses {HELD_OUT_MISSES:?}:\n{}",
        all.len(),
        all.join("\n")
    );
}
