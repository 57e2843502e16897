//! The payments service's `resilience.toml` against its recorded incident (an enforcing
//! recording: the calls its breaker refused have no answer of their own) and a recorded
//! healthy day (`data/*.jsonl.gz`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use replay_check_example::{Answer, Check};

fn here(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

fn check(recording: &str) -> Check {
    Check::load(&here("resilience.toml"), &here(recording)).unwrap()
}

#[test]
fn the_settings_fail_fast_within_a_second_in_the_incident() {
    let answer = check("data/incident.jsonl.gz").fails_fast_within("sber", Duration::from_secs(1));
    assert_eq!(answer, Answer::Met);
}

#[test]
fn the_settings_refuse_no_more_than_ten_healthy_calls_on_a_healthy_day() {
    let answer = check("data/healthy-day.jsonl.gz").refuses_at_most("sber", 10);
    assert_eq!(answer, Answer::Met);
}

#[test]
fn a_missed_objective_says_how_in_the_screens_words() {
    let incident = check("data/incident.jsonl.gz");
    assert_eq!(
        incident.fails_fast_within("sber", Duration::from_millis(100)),
        Answer::Missed("sber fails fast in incident 1 after 413 ms, not within 100 ms".into())
    );
    // Missed however the refused calls had been answered: the estimate with its error.
    assert_eq!(
        incident.refuses_at_most("sber", 500),
        Answer::Missed("sber refuses ≈1,226 ±383 healthy calls, more than 500".into())
    );
}

#[test]
fn a_cap_inside_the_estimates_interval_cannot_be_told() {
    assert_eq!(
        check("data/incident.jsonl.gz").refuses_at_most("sber", 1000),
        Answer::CannotTell(
            "cannot tell whether sber refuses at most 1,000 healthy calls: ≈1,226, between 843 and 1,526"
                .into()
        )
    );
}

#[test]
fn a_system_the_recording_lacks_cannot_be_told() {
    assert!(matches!(
        check("data/healthy-day.jsonl.gz").fails_fast_within("customer", Duration::from_secs(1)),
        Answer::CannotTell(_)
    ));
}
