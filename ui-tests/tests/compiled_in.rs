//! No path of the build machine in a built binary: `settings!()` names the compiled-in
//! file relative to its crate, `resilience.toml (compiled in)`, in `Settings::origin()`
//! (which the startup line prints) and in every error. A crate of its own is built in
//! release, its binary searched for the crate's directory, and run.

use std::process::Command;

use outbound_guard_ui_tests::scratch_crate;

const MAIN: &str = r#"
fn main() {
    match outbound_guard::settings!() {
        Ok(settings) => println!("origin: {}", settings.origin()),
        Err(e) => println!("error: {e}"),
    }
}
"#;

#[test]
fn a_release_binary_names_its_compiled_in_file_relative_to_the_crate() {
    let (project, target) = scratch_crate("compiled-in", "");
    std::fs::write(project.join("src/main.rs"), MAIN).unwrap();
    std::fs::write(project.join("resilience.toml"), "[systems.sber]\n").unwrap();
    let built = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--offline",
            "--quiet",
            "--bin",
            "compiled-in-check",
        ])
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let binary = target
        .join("release")
        .join(format!("compiled-in-check{}", std::env::consts::EXE_SUFFIX));
    let bytes = std::fs::read(&binary).unwrap();
    let dir = project.display().to_string();
    assert!(
        !bytes.windows(dir.len()).any(|w| w == dir.as_bytes()),
        "{} holds the build directory {dir}",
        binary.display()
    );

    let run = |vars: &[(&str, &str)]| {
        let output = Command::new(&binary)
            .env_remove("RESILIENCE_SETTINGS")
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(run(&[]), "origin: resilience.toml (compiled in)\n");
    let error = run(&[("CLIENT_SBR__CB_FAILURE_RATE", "0.5")]);
    assert!(error.starts_with("error: "), "{error}");
    assert!(error.contains("resilience.toml (compiled in)"), "{error}");
    assert!(!error.contains(&dir), "{error}");
}
