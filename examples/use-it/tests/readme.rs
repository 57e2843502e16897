//! The README's "Use it" section shows this crate: its `resilience.toml` and
//! `src/main.rs` verbatim, and its dependencies (as published crates rather than paths).

use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The README's "Use it" section: from its heading to the next `## `.
fn use_it_section() -> String {
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"));
    let start = readme.find("\n## Use it\n").expect("a `## Use it` section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_owned()
}

/// The fenced code blocks of `section` tagged `lang`.
fn blocks(section: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = section;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("a closed code block");
        found.push(body[..end].to_owned());
        rest = &body[end..];
    }
    found
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
    let section = use_it_section();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table = toml::from_str(&read(&dir.join("Cargo.toml"))).unwrap();
    let ours = manifest["dependencies"].as_table().unwrap();
    let shown = blocks(&section, "toml")
        .into_iter()
        .filter_map(|block| toml::from_str::<toml::Table>(&block).ok())
        .find_map(|table| table.get("dependencies").cloned())
        .expect("a `[dependencies]` block in the README's 'Use it' section");
    let shown = shown.as_table().unwrap();
    let names = |t: &toml::Table| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(shown), names(ours));
    for (name, spec) in ours {
        let shown_spec = &shown[name];
        let field = |spec: &toml::Value, key: &str| spec.get(key).cloned();
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
        match field(spec, "version") {
            Some(version) => assert_eq!(field(shown_spec, "version"), Some(version), "{name}"),
            // A path dependency of this workspace: the README names its published version.
            None => {
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
}
