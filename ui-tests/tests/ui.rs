//! Compile-fail and pass cases for `#[circuit_breaker]` and `#[derive(Guarded)]`, one
//! mistake per file. Bless with `TRYBUILD=overwrite cargo test -p outbound-guard-ui-tests
//! --test ui`, then read the diff.
//!
//! trybuild compiles each case as a crate of its own under
//! `<target>/tests/trybuild/outbound-guard-ui-tests/`, so that directory is that crate's
//! `CARGO_MANIFEST_DIR`. The attribute looks for `resilience.toml` there by the same rule
//! as in any service, so this test puts this crate's settings file there first: the
//! real lookup runs, with no bypass.

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
