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
