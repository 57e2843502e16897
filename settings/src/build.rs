//! For a service's build script: cargo rebuilds the crate when its settings file
//! changes, and the attribute's expansion no longer carries the file.
//!
//! Without a build script, each `#[derive(Guarded)]` naming a system and each method with
//! its own `#[circuit_breaker]` carries an `include_bytes!` of the settings file and of
//! `Cargo.toml`: stable Rust's only way for a macro to make cargo track a file, which
//! `cargo expand` then shows. A macro cannot track a file that does not exist yet, so
//! only a build script sees a `resilience.toml` created next to the crate's `Cargo.toml`
//! while the workspace root's is in use. With one, the build script tracks every input
//! instead and tells the attribute so:
//!
//! ```ignore
//! // build.rs, with `outbound-guard-settings` under `[build-dependencies]`
//! fn main() {
//!     outbound_guard_settings::build::track();
//! }
//! ```

use std::fmt::Write as _;
use std::path::Path;

use crate::locate::{crate_candidates, TRACKED_ENV};

/// Prints the build-script directives that track every input of the attribute's check
/// (found by the attribute's own rule), and tell the attribute which file it reads:
///
/// - the crate's `Cargo.toml`, whose `[package.metadata.outbound-guard] settings` may name
///   the file;
/// - the settings file in use;
/// - the directory of each place tried *before* it (the crate's own directory while the
///   workspace root's file is in use): cargo scans a directory named by
///   `rerun-if-changed` for changes, so a `resilience.toml` created there, which would
///   take precedence, reruns the build. (Naming the missing file itself would rerun the
///   build script on every build.)
///
/// Prints only the `Cargo.toml` line when there is no settings file; the attribute then
/// reports the missing file itself, and the failed build is redone on the next one.
///
/// Call it from `build.rs`, where cargo sets `CARGO_MANIFEST_DIR`.
///
/// # Panics
///
/// Outside a build script: cargo sets `CARGO_MANIFEST_DIR` for every build script.
pub fn track() {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("CARGO_MANIFEST_DIR is set by cargo for build scripts: call track() from build.rs");
    print!("{}", directives(Path::new(&dir)));
}

/// The directives [`track`] prints for the crate at `manifest_dir`.
fn directives(manifest_dir: &Path) -> String {
    let manifest_path = manifest_dir.join("Cargo.toml");
    let mut out = format!("cargo:rerun-if-changed={}\n", manifest_path.display());
    let candidates = crate_candidates(manifest_dir).unwrap_or_default();
    let Some(at) = candidates.iter().position(|c| c.path.is_file()) else {
        return out;
    };
    for shadowing in &candidates[..at] {
        if let Some(dir) = shadowing.path.parent() {
            let _ = writeln!(out, "cargo:rerun-if-changed={}", dir.display());
        }
    }
    let path = candidates[at].path.display();
    let _ = write!(
        out,
        "cargo:rerun-if-changed={path}\ncargo:rustc-env={TRACKED_ENV}={path}\n"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("og-build-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"svc\"\n[workspace]\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn names_the_settings_file_next_to_the_manifest() {
        let dir = scratch("found");
        std::fs::write(dir.join("resilience.toml"), "[systems.sber]\n").unwrap();
        let file = dir.join("resilience.toml").display().to_string();
        let manifest = dir.join("Cargo.toml").display().to_string();
        assert_eq!(
            directives(&dir),
            format!(
                "cargo:rerun-if-changed={manifest}\ncargo:rerun-if-changed={file}\ncargo:rustc-env={TRACKED_ENV}={file}\n"
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn with_the_workspace_roots_file_tracks_the_crates_directory_too() {
        let root = scratch("shadowed");
        std::fs::write(root.join("resilience.toml"), "[systems.sber]\n").unwrap();
        let member = root.join("adapters");
        std::fs::create_dir_all(&member).unwrap();
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"adapters\"\n",
        )
        .unwrap();
        let file = root.join("resilience.toml").display().to_string();
        let manifest = member.join("Cargo.toml").display().to_string();
        let dir = member.display().to_string();
        assert_eq!(
            directives(&member),
            format!(
                "cargo:rerun-if-changed={manifest}\ncargo:rerun-if-changed={dir}\ncargo:rerun-if-changed={file}\ncargo:rustc-env={TRACKED_ENV}={file}\n"
            )
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn without_a_settings_file_tracks_only_the_manifest() {
        let dir = scratch("missing");
        let manifest = dir.join("Cargo.toml").display().to_string();
        assert_eq!(
            directives(&dir),
            format!("cargo:rerun-if-changed={manifest}\n")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
