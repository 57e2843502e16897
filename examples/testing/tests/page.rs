//! `docs/testing.md` shows this crate: every file verbatim, every code block of the page
//! one of them, and its dependencies as published crates.

use std::path::Path;

use doc_snippets::{assert_shows_dependencies, blocks, read, section};

const SHOWN: [(&str, &str); 7] = [
    ("toml", "resilience.toml"),
    ("rust", "src/lib.rs"),
    ("rust", "tests/upstream.rs"),
    ("rust", "tests/paused.rs"),
    ("rust", "tests/compile_fail.rs"),
    ("rust", "tests/misuse/typo.rs"),
    ("text", "tests/misuse/typo.stderr"),
];

fn page() -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/testing.md"))
}

#[test]
fn the_page_shows_this_crates_files_verbatim_and_nothing_else() {
    let page = page();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (lang, file) in SHOWN {
        assert!(
            blocks(&page, lang).contains(&read(&dir.join(file))),
            "docs/testing.md must show examples/testing/{file} verbatim, in a ```{lang} block"
        );
    }
    for block in blocks(&page, "rust") {
        assert!(
            SHOWN.iter().any(|(_, file)| read(&dir.join(file)) == block),
            "a Rust block of docs/testing.md that no file of examples/testing holds:\n{block}"
        );
    }
}

#[test]
fn the_page_shows_this_crates_dependencies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = section(&page(), "An empty crate");
    assert_shows_dependencies(&setup, dir, "dependencies", &[]);
    assert_shows_dependencies(&setup, dir, "dev-dependencies", &["doc-snippets"]);
}
