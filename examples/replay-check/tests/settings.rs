//! The payments service's `resilience.toml` against its recorded incident (an enforcing
//! recording: the calls its breaker refused have no answer of their own) and a recorded
//! healthy day (`data/*.jsonl.gz`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use outbound_guard_settings::Settings;
use replay_check_example::{Check, Meets};

fn here(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

fn check(recording: &str) -> Check {
    Check::load(&here("resilience.toml"), &here(recording)).unwrap()
}

#[test]
fn the_settings_fail_fast_within_a_second_in_the_incident() {
    let check = check("data/incident.jsonl.gz");
    let (sber, as_set) = check.replay("sber").unwrap();
    assert_eq!(
        sber.fails_fast_within(&as_set, Duration::from_secs(1)),
        Meets::Met
    );
}

#[test]
fn the_settings_refuse_no_more_than_ten_healthy_calls_on_a_healthy_day() {
    let check = check("data/healthy-day.jsonl.gz");
    let (sber, as_set) = check.replay("sber").unwrap();
    assert_eq!(sber.refuses_at_most(&as_set, 10), Meets::Met);
}

#[test]
fn a_missed_objective_says_how_in_the_screens_words() {
    let check = check("data/incident.jsonl.gz");
    let (sber, as_set) = check.replay("sber").unwrap();
    let fast = sber.fails_fast_within(&as_set, Duration::from_millis(100));
    assert_eq!(
        fast.to_string(),
        "sber fails fast in incident 1 after 413 ms, not within 100 ms"
    );
    assert!(matches!(fast, Meets::Missed(_)));
    // Missed however the refused calls had been answered: the estimate with its error.
    let refused = sber.refuses_at_most(&as_set, 500);
    assert_eq!(
        refused,
        Meets::Missed("sber refuses ≈1,226 ±383 healthy calls, more than 500".into())
    );
}

#[test]
fn a_cap_inside_the_estimates_interval_cannot_be_told() {
    let check = check("data/incident.jsonl.gz");
    let (sber, as_set) = check.replay("sber").unwrap();
    assert_eq!(
        sber.refuses_at_most(&as_set, 1000),
        Meets::CannotTell(
            "cannot tell whether sber refuses at most 1,000 healthy calls: ≈1,226, between 843 and 1,526"
                .into()
        )
    );
}

#[test]
fn a_looser_breaker_fed_by_guessed_answers_cannot_be_told_to_fail_fast() {
    // The same incident through a setting the service did not run with: its breaker
    // lets run calls the recording's refused, whose answers are guessed.
    let check = check("data/incident.jsonl.gz");
    let (sber, _) = check.replay("sber").unwrap();
    let looser = Settings::parse("[systems.sber]\ncb_failure_rate = 0.5\n", "looser.toml").unwrap();
    let looser = sber.variant("looser", looser.system("sber").unwrap());
    assert_eq!(
        sber.fails_fast_within(&looser, Duration::from_secs(1)),
        Meets::CannotTell(
            "cannot tell whether sber fails fast in incident 1: 20 guessed answers fed the breaker first, and it may never have failed fast"
                .into()
        )
    );
}

#[test]
fn a_day_without_an_incident_does_not_judge_failing_fast() {
    let check = check("data/healthy-day.jsonl.gz");
    let (sber, as_set) = check.replay("sber").unwrap();
    assert_eq!(
        sber.fails_fast_within(&as_set, Duration::from_secs(1)),
        Meets::NotJudged("the recording has no incident of sber to fail fast in".into())
    );
}

#[test]
fn a_system_the_recording_lacks_is_an_error() {
    let Err(why) = check("data/healthy-day.jsonl.gz").replay("customer") else {
        panic!("the healthy day has no `customer`")
    };
    assert_eq!(
        why,
        "the recording or the settings have no system `customer`"
    );
}
