//! The docs' code blocks against the example crates that compile and run them: a page
//! shows a crate's files verbatim, and its dependencies as published crates. A
//! dev-dependency of the tests of `examples/use-it` (the README's "Use it"),
//! `examples/testing` (`docs/testing.md`) and `examples/payments-demo` (the other
//! pages' fragments, in `tests/docs.rs`); each uses its part.

use std::path::Path;

/// A file's text; a test failure naming it if it cannot be read.
///
/// # Panics
///
/// If `path` cannot be read.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The section of `page` under `## {heading}`, up to the next `## `.
///
/// # Panics
///
/// If `page` has no such section.
pub fn section(page: &str, heading: &str) -> String {
    let start = page
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("a `## {heading}` section"));
    let rest = &page[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_owned()
}

/// The fenced code blocks of `text` tagged `lang`.
///
/// # Panics
///
/// If one of them is not closed.
pub fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("a closed code block");
        found.push(body[..end].to_owned());
        rest = &body[end..];
    }
    found
}

/// Whether `block` is a run of `file`'s lines, indented alike: a fragment a page shows
/// (statements, an `impl`) compiled where it sits in a function or a module.
pub fn shown_in(block: &str, file: &str) -> bool {
    let want: Vec<&str> = block.lines().collect();
    let have: Vec<&str> = file.lines().collect();
    have.windows(want.len()).any(|window| {
        let indent = window[0].len() - window[0].trim_start().len();
        window.iter().zip(&want).all(|(have, want)| {
            if want.is_empty() {
                have.trim().is_empty()
            } else {
                have.len() > indent && have[..indent].trim().is_empty() && &have[indent..] == *want
            }
        })
    })
}

/// The `[table]` (`dependencies`, `dev-dependencies`) of the first of `text`'s TOML blocks
/// that has one, as shown to a reader, checked against the crate's manifest in `dir`: the
/// same crates (but `unshown`, the check's own), features and `default-features`; a path
/// dependency of this workspace shown with its published version.
///
/// # Panics
///
/// If the page and the manifest differ (the check failing), or either has no `[table]`.
pub fn assert_shows_dependencies(text: &str, dir: &Path, table: &str, unshown: &[&str]) {
    let manifest: toml::Table = toml::from_str(&read(&dir.join("Cargo.toml"))).unwrap();
    let mut ours = manifest[table].as_table().unwrap().clone();
    ours.retain(|name, _| !unshown.contains(&name));
    let shown = blocks(text, "toml")
        .into_iter()
        .filter_map(|block| toml::from_str::<toml::Table>(&block).ok())
        .find_map(|t| t.get(table).cloned())
        .unwrap_or_else(|| panic!("a `[{table}]` block"));
    let shown = shown.as_table().unwrap();
    let names = |t: &toml::Table| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(shown), names(&ours), "[{table}]");
    for (name, spec) in &ours {
        let shown_spec = &shown[name];
        // `name = "1.0"` is the version alone.
        let field = |spec: &toml::Value, key: &str| match spec {
            toml::Value::String(_) if key == "version" => Some(spec.clone()),
            _ => spec.get(key).cloned(),
        };
        assert_eq!(
            field(shown_spec, "features"),
            field(spec, "features"),
            "{name}"
        );
        assert_eq!(
            field(shown_spec, "default-features"),
            field(spec, "default-features"),
            "{name}"
        );
        if let Some(version) = field(spec, "version") {
            assert_eq!(field(shown_spec, "version"), Some(version), "{name}");
        } else {
            // A path dependency of this workspace: the page names its published version.
            let version = field(shown_spec, "version").expect("a version");
            let version = version.as_str().unwrap();
            assert!(
                env!("CARGO_PKG_VERSION").starts_with(version),
                "{name} = {version:?}, but the workspace is {}",
                env!("CARGO_PKG_VERSION")
            );
        }
    }
}
