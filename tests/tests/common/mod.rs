//! Helpers shared by the suite's test files (each test binary uses some of them).
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use outbound_guard::{Guards, Settings};
use outbound_guard_tests::recorder::Recorder;

/// Every system's guard for `settings`, without tracing, all observed by one recorder.
pub fn recorded_guards(settings: &Settings) -> (Guards, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let guards = Guards::builder(settings)
        .tracing(false)
        .observer(recorder.clone())
        .build();
    (guards, recorder)
}

/// Waits until `condition` holds, polling every millisecond, at most `within`; the
/// caller's assertion then reports what was seen. A deadline instead of a fixed sleep:
/// a busy machine only makes the test wait longer, never fail.
pub async fn eventually(within: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !condition() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The workspace's root: the first directory above this package whose `Cargo.toml` has a
/// `[workspace]` table.
pub fn workspace_root() -> std::path::PathBuf {
    let mut dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let manifest = dir.join("Cargo.toml");
        if std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("[workspace]")) {
            return dir;
        }
        assert!(dir.pop(), "no workspace Cargo.toml above the tests package");
    }
}

/// The workspace's members as its `Cargo.toml` lists them (`runtime`, `examples/use-it`).
pub fn members(root: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace manifest");
    let manifest: toml::Table = text.parse().expect("the workspace manifest parses");
    manifest["workspace"]["members"]
        .as_array()
        .expect("workspace.members is a list")
        .iter()
        .map(|m| m.as_str().expect("a member is a path").to_owned())
        .collect()
}
