//! For a service's build script: cargo rebuilds the crate when its settings file
//! changes, and the attribute's expansion no longer carries the file.
//!
//! Without a build script, each `#[adapter]` block, each method with its own
//! `#[circuit_breaker]` and each `#[derive(Guarded)]` naming a system carries an
//! `include_bytes!` of the settings file: stable Rust's only way for a macro to make
//! cargo track a file, which `cargo expand` then shows. With one, the
//! build script tracks the file instead and tells the attribute so:
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

/// Prints the build-script directives that track the crate's settings file (found by
/// the attribute's own rule): rerun when it or `Cargo.toml` changes, and tell the
/// attribute which file that is. Prints only the `Cargo.toml` line when there
/// is no settings file; the attribute then reports the missing file itself.
///
/// Call it from `build.rs`, where cargo sets `CARGO_MANIFEST_DIR`. A settings file
/// created later at a place tried *before* the tracked one (next to `Cargo.toml` while
/// the workspace root's is tracked) is picked up by the next `cargo clean` or edit of
/// `Cargo.toml`.
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
    let found = crate_candidates(manifest_dir)
        .ok()
        .and_then(|candidates| candidates.into_iter().find(|c| c.path.is_file()));
    if let Some(found) = found {
        let path = found.path.display();
        let _ = write!(
            out,
            "cargo:rerun-if-changed={path}\ncargo:rustc-env={TRACKED_ENV}={path}\n"
        );
    }
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
