//! The replay's screens as a person reads them, held as golden texts: the demo's
//! recording (`tests/data/demo-recording.jsonl`, 957 of its calls refused live, so
//! without a recorded outcome) replayed with the settings it ran with and with a
//! stricter and a looser `cb_failure_rate`. The default screen says, within 100
//! columns, whether each alternative is better, worse or the same on what an on-call
//! engineer weighs, and how sure; `--detail` gives the numbers, marking what rests on
//! guessed answers. `UPDATE_EXPECT=1 cargo test -p outbound-guard-cli --test screen`
//! rewrites the texts after a deliberate change.

// expect-test writes every golden text as `r#"…"#`, quotes or not.
#![allow(clippy::needless_raw_string_hashes)]

mod common;

use common::{bin, DEMO};
use expect_test::{expect, Expect};

/// The overrides the demo sets for `sber` where the user has not.
const DEMO_DEFAULTS: [(&str, &str); 4] = [
    ("CLIENT_SBER__CONNECT_TIMEOUT", "0.25"),
    ("CLIENT_SBER__READ_TIMEOUT", "1.2"),
    ("CLIENT_SBER__TOTAL_TIMEOUT", "2"),
    ("CLIENT_SBER__CB_OPEN_DURATION", "3"),
];

/// `replay` of the demo's recording with `extra` arguments: its standard output.
fn replay(extra: &[&str]) -> String {
    let output = bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "replay",
            "tests/data/demo-recording.jsonl",
            "--settings",
            DEMO,
        ])
        .args(["--env", "--system", "sber", "--max-replays", "2"])
        .args([
            "--compare",
            "cb_failure_rate=0.1",
            "--compare",
            "cb_failure_rate=0.6",
        ])
        .args(extra)
        .envs(DEMO_DEFAULTS)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Every line within the screen's 100 columns.
fn fits(text: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
}

fn golden(text: &str, expected: &Expect) {
    fits(text);
    // The settings file's path depends on where the workspace lies.
    expected.assert_eq(&text.replace(DEMO, "resilience.toml"));
}

#[test]
fn the_screen_says_in_words_which_setting_is_better_and_how_sure() {
    golden(
        &replay(&[]),
        &expect![[r#"
            tests/data/demo-recording.jsonl: 2,012 calls of 1 system from 2026-12-04 14:47:36.878 UTC over
              29.2 s; 66 lines out of start order (sorted)

            sber: 2,012 calls, 1 incident; its breaker opened 5 times; 957 calls have no recorded outcome (its
              guard refused them): what they would change is estimated
              as set, replayed: opened 5 times; ≈40 ±215 failing calls let through, ≈630 ±576 healthy refused;
                incident 1 (2026-12-04 14:47:40.893 UTC): failed fast after 413 ms
              cb_failure_rate=0.1, against the settings it ran with:
                fails fast in incident 1    better             exact: 112 ms against 413 ms
                failing calls let through   better             ≈25 against ≈40, on all 19 draws
                healthy calls refused       cannot tell        the 619 answers guessed could make it nearly
                                                               anything
                time callers waited         better             ≈22.2 s against ≈27.0 s, on all 19 draws
              cb_failure_rate=0.6, against the settings it ran with:
                fails fast in incident 1    cannot tell        389 guessed answers fed the breaker first, and it
                                                               may never have failed fast
                failing calls let through   worse              ≈131 against ≈40, on all 19 draws
                healthy calls refused       cannot tell apart  ≈492 against ≈630; −194 to +153
                time callers waited         worse              ≈49.2 s against ≈27.0 s, on all 19 draws

            to tell what is estimated or cannot be told: record in observe mode (cb_mode = "observe"), log at a
              proxy in front of the guard, or add another replica's recording (--replica)

            the numbers, their ranges and the openings: --detail; all of it: --json
        "#]],
    );
}

#[test]
fn the_detail_gives_the_numbers_and_marks_what_is_guessed() {
    golden(
        &replay(&["--detail"]),
        &expect![[r#"
            tests/data/demo-recording.jsonl: 2,012 calls of 1 system from 2026-12-04 14:47:36.878 UTC over
              29.2 s; 66 lines out of start order (sorted)

            sber: 2,012 calls, 1 incident; its breaker opened 5 times; 957 calls have no recorded outcome (its
              guard refused them): what they would change is estimated

            sber, as set:
              openings                      5 (8 guessed)
              failing calls let through     40 (15 guessed)
              healthy calls refused         630 (611 guessed)
              failing calls refused         218 (253 guessed)
              cancelled calls refused       0 (8 guessed)
              bulkhead refusals             109 (109 guessed)
              time callers waited           27.0 s (8 guessed)
              guessed calls let run         8
              ranges                        2 ways replayed, not every one; each figure the estimate with its
                                            error
              incident 1 at 2026-12-04 14:47:40.893 UTC (16.1 s, 30 failing):
                to fast fail                413 ms
                failing calls let through   40 (7 guessed)
              opened 2026-12-04 14:47:41.294 UTC  sber opened: 15 of 50 calls failed (30% ≥ 30%)
              opened 2026-12-04 14:47:44.307 UTC  sber opened again: trial 2 of 3 failed
              opened 2026-12-04 14:47:51.795 UTC  sber opened: 15 of 50 calls failed (30% ≥ 30%) (guessed)
              opened 2026-12-04 14:47:57.803 UTC  sber opened: 15 of 50 calls failed (30% ≥ 30%)
              opened 2026-12-04 14:48:02.835 UTC  sber forced open by an operator

            sber, cb_failure_rate=0.1:
              openings                      6 (68 guessed)
              failing calls let through     25 (74 guessed)
              healthy calls refused         cannot tell: the 619 answers guessed could make it nearly anything
              failing calls refused         292 (351 guessed)
              cancelled calls refused       0 (68 guessed)
              bulkhead refusals             55 (123 guessed)
              time callers waited           22.2 s (68 guessed)
              guessed calls let run         68
              ranges                        2 ways replayed, not every one; each figure the estimate with its
                                            error
              incident 1 at 2026-12-04 14:47:40.893 UTC (16.1 s, 30 failing):
                to fast fail                112 ms
                failing calls let through   23 (5 guessed)
              opened 2026-12-04 14:47:40.994 UTC  sber opened: 5 of 50 calls failed (10% ≥ 10%)
              opened 2026-12-04 14:47:44.209 UTC  sber opened: 1 of 10 calls failed (10% ≥ 10%) (guessed)
              opened 2026-12-04 14:47:51.023 UTC  sber opened: 5 of 50 calls failed (10% ≥ 10%) (guessed)
              opened 2026-12-04 14:47:57.506 UTC  sber opened: 5 of 50 calls failed (10% ≥ 10%) (guessed)
              opened 2026-12-04 14:48:01.119 UTC  sber opened again: trial 3 of 3 failed (guessed)
              opened 2026-12-04 14:48:02.835 UTC  sber forced open by an operator

            sber, cb_failure_rate=0.6:
              openings                      3 (402 guessed)
              failing calls let through     131 (532 guessed)
              healthy calls refused         492 (690 guessed)
              failing calls refused         59 (453 guessed)
              cancelled calls refused       0 (402 guessed)
              bulkhead refusals             218 (618 guessed)
              time callers waited           49.2 s (402 guessed)
              guessed calls let run         402
              ranges                        2 ways replayed, not every one; each figure the estimate with its
                                            error
              incident 1 at 2026-12-04 14:47:40.893 UTC (16.1 s, 30 failing):
                to fast fail                cannot tell: 389 guessed answers fed the breaker first, and it may
                                            never have failed fast
                failing calls let through   123 (122 guessed)
              opened 2026-12-04 14:47:53.292 UTC  sber opened: 30 of 50 calls failed (60% ≥ 60%) (guessed)
              opened 2026-12-04 14:47:58.651 UTC  sber opened: 30 of 50 calls failed (60% ≥ 60%) (guessed)
              opened 2026-12-04 14:48:02.835 UTC  sber forced open by an operator
        "#]],
    );
}

/// A `--compare` of many keys at once folds its heading within the width, on the screen
/// and in `--detail`.
#[test]
fn a_long_list_of_changed_keys_folds_within_the_width() {
    let keys = "cb_failure_rate=0.45,cb_open_duration=7,cb_half_open_calls=4,cb_window_size=80,\
                cb_min_calls=40";
    for extra in [
        &["--compare", keys][..],
        &["--compare", keys, "--detail"][..],
    ] {
        let text = replay(extra);
        fits(&text);
        assert!(
            text.contains("cb_failure_rate=0.45, cb_open_duration=7"),
            "{text}"
        );
    }
}
