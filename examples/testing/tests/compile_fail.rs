use std::path::Path;

#[test]
fn misuse_does_not_compile() {
    // trybuild builds each case in a crate of its own, <target>/tests/trybuild/<package>:
    // the attribute looks for resilience.toml next to that crate's Cargo.toml.
    let project = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../tests/trybuild/testing-example");
    std::fs::create_dir_all(&project).unwrap();
    let settings = Path::new(env!("CARGO_MANIFEST_DIR")).join("resilience.toml");
    std::fs::copy(settings, project.join("resilience.toml")).unwrap();
    trybuild::TestCases::new().compile_fail("tests/misuse/*.rs");
}
