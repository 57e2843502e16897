//! Tests of `#[circuit_breaker]` as a user's crate sees it. Its own `resilience.toml`
//! sits next to this crate's `Cargo.toml`, found by the same rule as in any service.
//!
//! The library holds what the test binaries share: where cargo builds, and where the
//! workspace is.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The cargo target directory the calling test binary was built in: `CARGO_TARGET_DIR`
/// if set, otherwise the nearest ancestor of the binary that holds cargo's
/// `CACHEDIR.TAG`.
///
/// # Panics
///
/// If the test binary's own path cannot be read.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map_or_else(|| workspace().join("target"), Path::to_path_buf)
}

/// The workspace's root directory.
///
/// # Panics
///
/// Never: this crate's directory has a parent, the workspace.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("ui-tests sits in the workspace")
        .to_path_buf()
}

/// A crate of its own under the target directory (`tests/<name>/service`), depending on
/// the workspace's runtime, with `lib_rs` as its library. Returns its directory and the
/// target directory to build it in, shared by every scratch crate so that their
/// dependencies are compiled once.
pub fn scratch_crate(name: &str, lib_rs: &str) -> (PathBuf, PathBuf) {
    scratch_crate_with_build(name, lib_rs, None)
}

/// [`scratch_crate`] with `build_rs` as its build script, which may use the workspace's
/// settings crate (a build-dependency).
///
/// # Panics
///
/// If a file of the crate cannot be written (or `Cargo.lock` copied), which fails the test.
pub fn scratch_crate_with_build(
    name: &str,
    lib_rs: &str,
    build_rs: Option<&str>,
) -> (PathBuf, PathBuf) {
    let root = target_dir().join("tests").join(name);
    let project = root.join("service");
    std::fs::create_dir_all(project.join("src")).expect("create the crate's directory");
    let crate_path = |dir: &str| format!("{:?}", workspace().join(dir).display().to_string());
    let mut manifest = format!(
        "[package]\nname = \"{name}-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\noutbound-guard = {{ path = {} }}\n\n[workspace]\n",
        crate_path("runtime")
    );
    let build_file = project.join("build.rs");
    match build_rs {
        Some(build_rs) => {
            let _ = write!(
                manifest,
                "\n[build-dependencies]\noutbound-guard-settings = {{ path = {} }}\n",
                crate_path("settings")
            );
            std::fs::write(&build_file, build_rs).expect("write build.rs");
        }
        None => {
            let _ = std::fs::remove_file(&build_file);
        }
    }
    std::fs::write(project.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    // The workspace's lock file, so the offline build uses the versions already fetched.
    std::fs::copy(workspace().join("Cargo.lock"), project.join("Cargo.lock"))
        .expect("copy Cargo.lock");
    std::fs::write(project.join("src/lib.rs"), lib_rs).expect("write lib.rs");
    (project, target_dir().join("tests").join("scratch-target"))
}

/// [`scratch_crate_with_build`] as the member `service` of a workspace of its own (the
/// directory above it), with no settings file anywhere yet. Returns the member's
/// directory and the target directory.
///
/// # Panics
///
/// If a file of the workspace cannot be read, written or moved, which fails the test.
pub fn workspace_member(name: &str, lib_rs: &str, build_rs: Option<&str>) -> (PathBuf, PathBuf) {
    let (project, target) = scratch_crate_with_build(name, lib_rs, build_rs);
    let root = project
        .parent()
        .expect("the crate sits in its test's directory");
    let manifest = project.join("Cargo.toml");
    let member = std::fs::read_to_string(&manifest)
        .expect("read Cargo.toml")
        .replace("\n[workspace]\n", "\n");
    std::fs::write(&manifest, member).expect("write Cargo.toml");
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"service\"]\nresolver = \"2\"\n",
    )
    .expect("write the workspace's Cargo.toml");
    std::fs::rename(project.join("Cargo.lock"), root.join("Cargo.lock")).expect("move Cargo.lock");
    for stale in [
        project.join("resilience.toml"),
        root.join("resilience.toml"),
    ] {
        let _ = std::fs::remove_file(stale);
    }
    (project, target)
}

/// `cargo build` of the crate at `project`, offline, in `target`.
///
/// # Panics
///
/// If cargo cannot be started.
pub fn cargo_build(project: &Path, target: &Path) -> Output {
    Command::new(env!("CARGO"))
        .arg("build")
        .arg("--offline")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo")
}

/// An adapter defined in a library crate, as the design card writes it: its
/// `system = "sber"` literal lives in this crate, while the guards it is given are built
/// in another (a test binary), from settings parsed there. The check that a call's guard
/// is its own system's must hold across crates, whose string literals have addresses of
/// their own.
#[derive(outbound_guard::Guarded)]
pub struct LibraryAdapter {
    /// The guard it was built with, by the crate that uses it.
    pub guard: outbound_guard::Guard,
}

/// `LibraryAdapter`'s port error: the guard's refusal.
#[derive(Debug)]
pub struct LibraryError(pub outbound_guard::CircuitBreakerError);

impl LibraryError {
    fn unavailable(error: outbound_guard::CircuitBreakerError) -> Self {
        LibraryError(error)
    }
}

impl LibraryAdapter {
    /// A guarded call that returns the bulkhead permits in use while it runs.
    ///
    /// # Errors
    ///
    /// The guard's refusal, as [`LibraryError`].
    #[outbound_guard::circuit_breaker(system = "sber", error_map = LibraryError::unavailable)]
    pub async fn register(&self) -> Result<usize, LibraryError> {
        Ok(self.guard.in_flight())
    }
}
