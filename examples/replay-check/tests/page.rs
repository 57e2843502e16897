//! `docs/replay.md`'s "As a library" shows this crate: each of its Rust blocks a run of
//! one of the crate's files' lines (or, for the scripted upstream, of the replay crate's
//! test of it), and each message it shows one a test asserts.

use std::path::Path;

use doc_snippets::{blocks, read, section, shown_in};

const FILES: [&str; 3] = [
    "src/lib.rs",
    "tests/settings.rs",
    "../../replay/tests/looped.rs",
];

fn section_shown() -> String {
    let page = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/replay.md"));
    section(&page, "As a library")
}

#[test]
fn the_pages_code_is_this_crates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rust = blocks(&section_shown(), "rust");
    assert!(!rust.is_empty(), "the section shows the crate's code");
    for block in rust {
        assert!(
            FILES.iter().any(|f| shown_in(&block, &read(&dir.join(f)))),
            "a Rust block of docs/replay.md that no file of examples/replay-check holds:\n{block}"
        );
    }
}

#[test]
fn the_pages_messages_are_the_ones_the_tests_assert() {
    let tests = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/settings.rs"));
    let text = blocks(&section_shown(), "text");
    assert_eq!(text.len(), 1, "one block of messages");
    for line in text[0].lines() {
        assert!(
            tests.contains(&format!("\"{line}\"")),
            "docs/replay.md shows a message tests/settings.rs does not assert: {line}"
        );
    }
}
