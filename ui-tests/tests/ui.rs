//! Compile-fail and pass cases for `#[adapter]`, `#[circuit_breaker]` and `#[derive(Guarded)]`, one
//! mistake per file. Bless with `TRYBUILD=overwrite cargo test -p outbound-guard-ui-tests
//! --test ui`, then read the diff.
//!
//! trybuild compiles each case as a binary of a crate it generates under
//! `<target>/tests/trybuild/outbound-guard-ui-tests/`, so that directory is the cases'
//! `CARGO_MANIFEST_DIR`, and the attribute looks for the settings file from there by the
//! user's rule. No part of that rule reaches this crate's `resilience.toml`: trybuild's
//! generated `Cargo.toml` keeps the package's name, edition, dependencies and features
//! but not its `[package.metadata]` (so `[package.metadata.outbound-guard] settings`
//! cannot name the file), and it is a `[workspace]` of its own (so the workspace root
//! is that directory too). So this test puts the file where the rule's first place is,
//! next to the generated `Cargo.toml`, found under any target directory
//! (`CARGO_TARGET_DIR` or cargo's default); the real lookup runs, with no bypass.

use std::path::Path;

use outbound_guard_ui_tests::target_dir;

fn install_settings() {
    let project = target_dir().join("tests/trybuild/outbound-guard-ui-tests");
    std::fs::create_dir_all(&project).expect("create trybuild's project directory");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("resilience.toml");
    std::fs::copy(&source, project.join("resilience.toml")).expect("copy resilience.toml");
}

#[test]
fn ui() {
    install_settings();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/fail/*.rs");
}

#[test]
fn pass() {
    install_settings();
    let cases = trybuild::TestCases::new();
    cases.pass("tests/pass/*.rs");
}

/// The paths of the runtime a user never writes (`#[doc(hidden)]`): an error naming one
/// points at machinery, not at the user's code.
const HIDDEN: [&str; 5] = [
    "__private",
    "Declares",
    "Name<",
    "ResultType",
    "__settings_file",
];

/// The errors whose check is a trait only the runtime names (an adapter's system against
/// its derive's): rustc prints the unimplemented trait in a `help:` line of its own
/// whatever `#[diagnostic::on_unimplemented]` says, so there, and only there, the trait
/// may appear. Every other line of them, and every line of every other error, is free of
/// hidden paths.
///
/// Tried on rustc 1.95 with a file of its own (a trait with `on_unimplemented`'s
/// `message` and `label`, a generic `Name<…>` parameter, and an impl of it for another
/// type marked `#[diagnostic::do_not_recommend]`): the one error keeps the message and
/// the label, and rustc still adds a help line, "the trait `Declares<Name<'s', 'b'>>`
/// is not implemented for `Sber`", pointing at the type. `do_not_recommend` only chooses which
/// impls rustc descends into or lists ("but trait … is implemented for …"). Without
/// `message` the help line stays and the message names the trait too ("the trait bound
/// `Sber: Declares<Name<'s', 'b'>>` is not satisfied").
const TRAIT_NAMED_BY_RUSTC: [&str; 6] = [
    "adapter-refine-other-system",
    "adapter-system-mismatch",
    "card-missing-derive",
    "generic-block-system-other-than-derive",
    "method-system-other-than-derive",
    "trait-method-system-other-than-derive",
];

/// rustc's notes on the bound of a runtime function the expansion calls, which no
/// attribute can silence: the function that reaches a type's declared system (a type
/// that declares none) and the one that types `error_map` (one of the wrong signature).
/// Listed line by line, so that any other leak fails.
const RUSTC_NOTES: [&str; 4] = [
    "note: required by a bound in `outbound_guard::__private::declared`",
    "  --> $WORKSPACE/runtime/src/__private.rs",
    "   | pub fn declared<A: SystemAdapter + ?Sized>(adapter: &A) -> &Guard {",
    "   | pub fn error_map<R: ResultType>(",
];

#[test]
fn no_error_names_a_hidden_path() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fail");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/fail") {
        let path = entry.expect("an entry of tests/fail").path();
        if path.extension().is_none_or(|e| e != "stderr") {
            continue;
        }
        let case = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a .stderr file");
        let rustc_help = TRAIT_NAMED_BY_RUSTC.contains(&case.as_str());
        for line in text.lines() {
            let allowed = RUSTC_NOTES.contains(&line)
                || rustc_help
                    && (line.starts_with("help: the trait `")
                        || line.trim_start().starts_with("but trait `"));
            if let Some(hidden) = HIDDEN.iter().find(|h| line.contains(*h)) {
                if !allowed {
                    found.push(format!("{case}.stderr names `{hidden}`: {line}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "hidden paths in errors:\n{}",
        found.join("\n")
    );
}
