//! Editing `resilience.toml` rebuilds the crate that the attribute checked against it:
//! no stale green build. A small crate of its own is built three times with cargo —
//! as written, after its settings lose the annotated system (the build must now fail,
//! naming it), and after the file is restored (green again) — once tracked by the
//! attribute's `include_bytes!`, once by a build script calling
//! `outbound_guard_settings::build::track()`, which keeps the file out of the expansion.
//!
//! The file is not the check's only input: `[package.metadata.outbound-guard] settings`
//! in `Cargo.toml` says which file is read (changing it must rebuild, with or without a
//! build script), and a `resilience.toml` created next to a workspace member takes
//! precedence over the workspace root's (seen with a build script: a macro cannot make
//! cargo track a file that does not exist yet, nor a directory).

use std::path::{Path, PathBuf};

use std::process::Output;

use outbound_guard_ui_tests::{cargo_build as build, scratch_crate_with_build, workspace_member};

const LIB: &str = r#"
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}
"#;

const BUILD_RS: &str = "fn main() {\n    outbound_guard_settings::build::track();\n}\n";

/// Builds the crate `name` as written, with its settings edited, and restored; returns
/// its directory and target directory.
fn edit_and_restore(name: &str, build_rs: Option<&str>) -> (PathBuf, PathBuf) {
    let (project, target) = scratch_crate_with_build(name, LIB, build_rs);
    let settings = project.join("resilience.toml");

    std::fs::write(&settings, "[systems.sber]\n").unwrap();
    let first = build(&project, &target);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );

    std::fs::write(&settings, "[systems.sberbank]\n").unwrap();
    let edited = build(&project, &target);
    let stderr = String::from_utf8_lossy(&edited.stderr);
    assert!(!edited.status.success(), "a stale build passed:\n{stderr}");
    assert!(
        stderr.contains("no system `sber`") && stderr.contains("did you mean `sberbank`?"),
        "{stderr}"
    );

    std::fs::write(&settings, "[systems.sber]\n").unwrap();
    let restored = build(&project, &target);
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    (project, target)
}

/// Whether rustc's dep-info for the crate `name` lists a `resilience.toml`: what the
/// `include_bytes!` in an expansion leaves behind. The newest dep-info only: the target
/// directory outlives this run, and may hold the crate built against another checkout.
fn expansion_reads_settings(target: &Path, name: &str) -> bool {
    let prefix = format!("{}-", name.replace('-', "_"));
    let deps = target.join("debug").join("deps");
    let newest = std::fs::read_dir(&deps)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let file = path.file_name().unwrap().to_string_lossy();
            file.starts_with(&prefix) && file.ends_with(".d")
        })
        .max_by_key(|path| path.metadata().unwrap().modified().unwrap())
        .unwrap_or_else(|| panic!("no dep-info for {name} in {}", deps.display()));
    std::fs::read_to_string(newest)
        .unwrap()
        .contains("resilience.toml")
}

#[test]
fn editing_the_settings_file_rebuilds_the_crate() {
    let (_, target) = edit_and_restore("rebuild", None);
    assert!(expansion_reads_settings(&target, "rebuild-check"));
}

#[test]
fn a_build_script_tracks_the_settings_file_instead_of_the_expansion() {
    let (_, target) = edit_and_restore("rebuild-tracked", Some(BUILD_RS));
    assert!(!expansion_reads_settings(&target, "rebuild-tracked-check"));
}

/// An adapter as the README writes one: the derive declares the system, the block
/// names it too (and leaves the tracking to the derive).
const ADAPTER_LIB: &str = r#"
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Adapter {
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}
"#;

#[track_caller]
fn passes(output: &Output) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[track_caller]
fn fails_without_sber(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "a stale build passed:\n{stderr}");
    assert!(stderr.contains("no system `sber`"), "{stderr}");
}

/// `settings = "ours.toml"` (with `sber`) changed to `settings = "other.toml"`
/// (without): the next build reads the other file and fails; changed back, it passes.
fn repointing_the_manifest_key(name: &str, build_rs: Option<&str>) {
    let (project, target) = scratch_crate_with_build(name, ADAPTER_LIB, build_rs);
    std::fs::write(project.join("ours.toml"), "[systems.sber]\n").unwrap();
    std::fs::write(project.join("other.toml"), "[systems.customer]\n").unwrap();
    let manifest = project.join("Cargo.toml");
    let written = std::fs::read_to_string(&manifest).unwrap();
    let pointing = |file: &str| {
        let key = format!("\n[package.metadata.outbound-guard]\nsettings = \"{file}\"\n");
        std::fs::write(&manifest, format!("{written}{key}")).unwrap();
    };
    pointing("ours.toml");
    passes(&build(&project, &target));
    pointing("other.toml");
    fails_without_sber(&build(&project, &target));
    pointing("ours.toml");
    passes(&build(&project, &target));
}

#[test]
fn repointing_the_manifest_key_rebuilds_the_crate() {
    repointing_the_manifest_key("rebuild-key", None);
}

#[test]
fn repointing_the_manifest_key_reruns_the_build_script() {
    repointing_the_manifest_key("rebuild-key-tracked", Some(BUILD_RS));
}

#[test]
fn a_file_created_next_to_a_member_takes_precedence_at_once_with_a_build_script() {
    let (project, target) = workspace_member("rebuild-shadowed", ADAPTER_LIB, Some(BUILD_RS));
    std::fs::write(
        project.parent().unwrap().join("resilience.toml"),
        "[systems.sber]\n",
    )
    .unwrap();
    passes(&build(&project, &target));
    // Takes precedence over the workspace root's, and lacks `sber`.
    let shadowing = project.join("resilience.toml");
    std::fs::write(&shadowing, "[systems.customer]\n").unwrap();
    fails_without_sber(&build(&project, &target));
    std::fs::remove_file(&shadowing).unwrap();
    passes(&build(&project, &target));
}
