//! The runtime's public type names are its own: no other crate of the workspace defines
//! a type of the same name in its non-test code, so that a `Verdict` or a `Judge` met
//! in a stack trace, a review or a doc is the runtime's.
//!
//! The runtime's public types are read from its public API's snapshot
//! (`tests/api/outbound-guard.txt`): each `pub struct`, `enum`, `trait`, `type` or
//! `union` there (associated types and the hidden `__` modules aside) that the runtime's
//! own source defines (so the settings crate's re-exported types stay the settings
//! crate's). Every other member's `src/` is then read with `syn`: each `struct`, `enum`,
//! `trait`, `type` or `union` it defines, outside `#[cfg(test)]` modules and the test
//! packages (the integration suite, the ui-tests and the test recorder), must not take
//! one of those names. The exceptions are named: [`ALLOWED`], by design, and [`KNOWN`],
//! to be renamed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

use common::{members, workspace_root};

/// Names another crate may define beside the runtime's, by design: `(crate directory,
/// name)`.
const ALLOWED: &[(&str, &str)] = &[
    // The recording format's published names for a recorded call's outcome and its
    // cause, as the recording's readers meet them.
    ("recording", "Outcome"),
    ("recording", "Cause"),
];

/// Names another crate defines today and is to rename: `(crate directory, name)`. A pair
/// here that is no longer found fails the test, so the list only shrinks.
///
/// The recording crate's `Transition` (a transition's line of the format, published) is
/// the runtime's word for the event it records; renaming it is a breaking change of the
/// format crate's API, to be made with a version bump and a CHANGELOG entry.
const KNOWN: &[(&str, &str)] = &[("recording", "Transition")];

/// The runtime's words besides its type names, which no other crate takes as a type's
/// name either: a judged call is what `Guard::call_judged` makes, with a `Judge`.
const RUNTIME_WORDS: &[&str] = &["Judged"];

/// Packages of test code only.
const TEST_PACKAGES: &[&str] = &["tests", "ui-tests", "support/test-recorder"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = a.meta.to_token_stream_string();
            text.contains("test") && !text.contains("not (test") && !text.contains("not(test")
        }
    })
}

trait MetaText {
    fn to_token_stream_string(&self) -> String;
}

impl MetaText for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        match self {
            syn::Meta::List(list) => list.tokens.to_string(),
            _ => String::new(),
        }
    }
}

/// The types a file's items define, outside test-only modules.
fn types(items: &[syn::Item], out: &mut Vec<String>) {
    for item in items {
        let (ident, attrs) = match item {
            syn::Item::Struct(s) => (&s.ident, &s.attrs),
            syn::Item::Enum(e) => (&e.ident, &e.attrs),
            syn::Item::Trait(t) => (&t.ident, &t.attrs),
            syn::Item::Type(t) => (&t.ident, &t.attrs),
            syn::Item::Union(u) => (&u.ident, &u.attrs),
            syn::Item::Mod(m) => {
                if let (false, Some((_, inner))) = (is_test_only(&m.attrs), &m.content) {
                    types(inner, out);
                }
                continue;
            }
            syn::Item::Macro(m) => {
                // Items written inside a macro's call (`pin_project! { … }`).
                if let Ok(inner) = syn::parse2::<syn::File>(m.mac.tokens.clone()) {
                    types(&inner.items, out);
                }
                continue;
            }
            _ => continue,
        };
        if !is_test_only(attrs) {
            out.push(ident.to_string());
        }
    }
}

/// The files of a crate directory's `src/` that test code alone compiles: those a
/// `#[cfg(test)] mod name;` declares, found by name (`tests.rs`, `loom_tests.rs`).
fn test_only_files(files: &[PathBuf]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).expect("a source file");
        let Ok(parsed) = syn::parse_file(&text) else {
            continue;
        };
        for item in &parsed.items {
            if let syn::Item::Mod(m) = item {
                if m.content.is_none() && is_test_only(&m.attrs) {
                    out.insert(format!("{}.rs", m.ident));
                }
            }
        }
    }
    out
}

/// The first line of `text` that defines a type `name` (`pub(crate) struct Name<…>`).
fn line_of(text: &str, name: &str) -> usize {
    let defines = |line: &str| {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        words
            .windows(2)
            .any(|w| ["struct", "enum", "trait", "type", "union"].contains(&w[0]) && w[1] == name)
    };
    text.lines().position(defines).map_or(0, |i| i + 1)
}

/// Each type a crate directory's non-test code defines: name → `file:line`s.
fn defined_in(root: &Path, member: &str) -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    rust_files(&root.join(member).join("src"), &mut files);
    let test_only = test_only_files(&files);
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if test_only.contains(name) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a source file");
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
        let mut found = Vec::new();
        types(&parsed.items, &mut found);
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for ty in found {
            let line = line_of(&text, &ty);
            out.entry(ty).or_default().push(format!("{shown}:{line}"));
        }
    }
    out
}

/// The runtime's public type names: in its API snapshot, and defined in its source.
fn runtime_public_types(root: &Path) -> BTreeSet<String> {
    let api = std::fs::read_to_string(root.join("tests/api/outbound-guard.txt"))
        .expect("the runtime's public API snapshot");
    let own = defined_in(root, "runtime");
    let mut out = BTreeSet::new();
    for line in api.lines() {
        let line = line.strip_prefix("#[non_exhaustive] ").unwrap_or(line);
        let Some(rest) = [
            "pub struct ",
            "pub enum ",
            "pub trait ",
            "pub type ",
            "pub union ",
        ]
        .iter()
        .find_map(|k| line.strip_prefix(k)) else {
            continue;
        };
        let path = rest[..rest.find(['<', ' ', '(']).unwrap_or(rest.len())].trim_end_matches(':');
        let segments: Vec<&str> = path.split("::").collect();
        let name = *segments.last().expect("a path");
        let associated = segments.len() > 2
            && segments[segments.len() - 2].starts_with(|c: char| c.is_ascii_uppercase());
        if associated || segments.iter().any(|s| s.starts_with("__")) {
            continue;
        }
        if own.contains_key(name) {
            out.insert(name.to_owned());
        }
    }
    out
}

#[test]
fn no_other_crate_defines_a_type_named_as_one_of_the_runtimes_public_types() {
    let root = workspace_root();
    let mut public = runtime_public_types(&root);
    for expected in [
        "Guard",
        "Judge",
        "Verdict",
        "CircuitBreakerError",
        "Observer",
        "Outcome",
    ] {
        assert!(
            public.contains(expected),
            "the runtime's public types read: {public:?}"
        );
    }
    public.extend(RUNTIME_WORDS.iter().map(|w| (*w).to_owned()));
    let mut clashes = Vec::new();
    let mut known_found = BTreeSet::new();
    for member in members(&root) {
        if member == "runtime" || TEST_PACKAGES.contains(&member.as_str()) {
            continue;
        }
        for (name, sites) in defined_in(&root, &member) {
            if !public.contains(&name) || ALLOWED.contains(&(member.as_str(), name.as_str())) {
                continue;
            }
            if KNOWN.contains(&(member.as_str(), name.as_str())) {
                known_found.insert((member.clone(), name));
                continue;
            }
            for site in sites {
                clashes.push(format!("{site}: `{name}` is a public type of the runtime"));
            }
        }
    }
    assert!(
        clashes.is_empty(),
        "types named as the runtime's public types (rename them):\n{}",
        clashes.join("\n")
    );
    for (member, name) in KNOWN {
        assert!(
            known_found.contains(&((*member).to_owned(), (*name).to_owned())),
            "{member} no longer defines `{name}`: remove it from KNOWN"
        );
    }
}
