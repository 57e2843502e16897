//! Tests of `#[circuit_breaker]` as a user's crate sees it. Its own `resilience.toml`
//! sits next to this crate's `Cargo.toml`, found by the same rule as in any service.
//!
//! The library holds what the test binaries share: where cargo builds, and where the
//! workspace is.

use std::path::{Path, PathBuf};

/// The cargo target directory the calling test binary was built in: `CARGO_TARGET_DIR`
/// if set, otherwise the nearest ancestor of the binary that holds cargo's
/// `CACHEDIR.TAG`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace().join("target"))
}

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("ui-tests sits in the workspace")
        .to_path_buf()
}
