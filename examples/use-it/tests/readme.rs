//! The README's "Use it" section shows this crate: its `resilience.toml` and
//! `src/main.rs` verbatim, and its dependencies (as published crates rather than paths).

use std::path::Path;

use doc_snippets::{assert_shows_dependencies, blocks, read, section};

/// The README's "Use it" section.
fn use_it_section() -> String {
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"));
    section(&readme, "Use it")
}

#[test]
fn the_readme_shows_this_crates_main_and_settings_verbatim() {
    let section = use_it_section();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let main = read(&dir.join("src/main.rs"));
    assert!(
        blocks(&section, "rust").contains(&main),
        "the README's 'Use it' section must show examples/use-it/src/main.rs verbatim"
    );
    let settings = read(&dir.join("resilience.toml"));
    assert!(
        blocks(&section, "toml").contains(&settings),
        "the README's 'Use it' section must show examples/use-it/resilience.toml verbatim"
    );
}

#[test]
fn the_readme_shows_this_crates_dependencies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_shows_dependencies(&use_it_section(), dir, "dependencies", &[]);
}
