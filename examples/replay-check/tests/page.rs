//! `docs/replay.md`'s "As a library" shows this crate: each Rust block of the page a run
//! of one of the crate's files' lines (or, for the scripted upstream, of the replay
//! crate's test of it), and each message the section shows one a test asserts.

use std::path::Path;

use doc_snippets::{blocks, read, section, shown_in};

const FILES: [&str; 3] = [
    "src/lib.rs",
    "tests/settings.rs",
    "../../replay/tests/looped.rs",
];

fn page() -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/replay.md"))
}

fn section_shown() -> String {
    section(&page(), "As a library")
}

#[test]
fn the_pages_code_is_this_crates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The whole page: the payments demo's test of every doc's Rust blocks leaves this
    // page to this one.
    let rust = blocks(&page(), "rust");
    assert!(!rust.is_empty(), "the page shows the crate's code");
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
