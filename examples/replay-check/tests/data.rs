//! Where the committed recordings come from, held by a test so that each can be made
//! again: the incident is the payments demo's own recording (the one `outbound-guard
//! replay`'s tests replay, `cli/tests/data/demo-recording.jsonl`), gzipped; the healthy
//! day is written by [`healthy_day`] below. `REMAKE=1 cargo test -p replay-check-example
//! --test data` writes both files again.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

fn here(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

/// Five minutes of `sber` at ten calls a second, every call answered in 5 to 15 ms, one
/// in 250 failing: a day with nothing wrong.
fn healthy_day() -> String {
    let mut text = String::new();
    for i in 0..3000_u32 {
        let start = 1_796_395_656_100.0 + f64::from(i) * 100.0;
        let duration = f64::from(5 + i * 7 % 11);
        let outcome = if i % 250 == 0 { "failure" } else { "success" };
        writeln!(
            text,
            "{{\"system\":\"sber\",\"start\":{start:.3},\"duration_ms\":{duration:.3},\"outcome\":\"{outcome}\"}}"
        )
        .unwrap();
    }
    text
}

/// The committed file `file` holds `text` gzipped (written again under `REMAKE=1`).
fn holds(file: &str, text: &str) {
    let path = here(file);
    if std::env::var_os("REMAKE").is_some() {
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
    }
    let mut committed = String::new();
    MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut committed)
        .unwrap();
    assert!(
        committed == text,
        "{} is not what its source gives: `REMAKE=1 cargo test -p replay-check-example --test data` writes it again",
        path.display()
    );
}

#[test]
fn the_incident_is_the_demos_recording() {
    let demo = std::fs::read_to_string(here("../../cli/tests/data/demo-recording.jsonl")).unwrap();
    holds("data/incident.jsonl.gz", &demo);
}

#[test]
fn the_healthy_day_is_its_generators() {
    holds("data/healthy-day.jsonl.gz", &healthy_day());
}
