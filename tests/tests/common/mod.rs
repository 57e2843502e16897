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
