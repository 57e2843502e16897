//! What the suites of the binary share: the demo's settings file, the binary with the
//! tests' own `CLIENT_…` overrides kept out of its environment, and reading its `--json`
//! report.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;
use outbound_guard::Guard;

/// The demo's `resilience.toml`.
#[allow(dead_code)] // not every suite replays the demo
pub const DEMO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/payments-demo/resilience.toml"
);

/// The `outbound-guard` binary, without the environment's `CLIENT_…` variables.
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_outbound-guard"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CLIENT_") {
            command.env_remove(name);
        }
    }
    command
}

/// The command's `--json` report, once it exited 0 (its standard error in the message
/// if not).
#[allow(dead_code)] // not every suite reads a report
pub fn json_report(output: &std::process::Output) -> serde_json::Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `(from, to, at_ms)` of each transition in a list of the JSON report.
#[allow(dead_code)] // not every suite compares transitions
pub fn transitions(all: &serde_json::Value) -> Vec<(String, String, f64)> {
    all.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["from"].as_str().unwrap().to_owned(),
                t["to"].as_str().unwrap().to_owned(),
                t["at_ms"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// An empty directory of this test process for `name`, under the system's temporary one.
#[allow(dead_code)] // not every suite writes files
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("og-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One GET of `url` through `guard` (an error status is the call's error), to spawn:
/// whether the guard let it run.
#[allow(dead_code)] // not every suite calls an upstream
pub fn guarded_get(
    guard: &Guard,
    client: &reqwest::Client,
    url: &str,
) -> impl Future<Output = bool> + Send + 'static {
    let (guard, client, url) = (guard.clone(), client.clone(), url.to_owned());
    async move {
        guard
            .call(async move {
                client
                    .get(url)
                    .send()
                    .await
                    .and_then(reqwest::Response::error_for_status)
                    .map(drop)
            })
            .await
            .is_ok()
    }
}

/// A guard of system `s` of `settings` (its text, written to `dir/resilience.toml`)
/// whose recorder writes every call and transition to `dir/calls.jsonl`.
#[allow(dead_code)] // not every suite records real traffic
pub struct RecordedGuard {
    pub guard: Guard,
    pub recorder: std::sync::Arc<outbound_guard_recorder::Recorder>,
    pub settings: PathBuf,
    pub recording: PathBuf,
}

#[allow(dead_code)] // not every suite records real traffic
impl RecordedGuard {
    pub fn new(dir: &std::path::Path, settings: &str) -> RecordedGuard {
        use outbound_guard_recorder::{Recorder, RecorderOptions};
        let settings_path = dir.join("resilience.toml");
        std::fs::write(&settings_path, settings).unwrap();
        let recording = dir.join("calls.jsonl");
        let parsed = outbound_guard::Settings::parse(settings, "resilience.toml").unwrap();
        let recorder =
            std::sync::Arc::new(Recorder::to_file(&recording, RecorderOptions::default()).unwrap());
        let guard = Guard::builder(parsed.system("s").unwrap())
            .observer(recorder.clone())
            .build();
        RecordedGuard {
            guard,
            recorder,
            settings: settings_path,
            recording,
        }
    }

    /// Writes what is left and checks that no record was dropped.
    pub fn flush(&self) {
        self.recorder.flush();
        let stats = self.recorder.stats();
        assert_eq!(stats.dropped_queue_full + stats.dropped_write_error, 0);
    }
}

/// A reqwest client that cuts each call at `timeout` (and its connection at 50 ms).
#[allow(dead_code)] // not every suite calls an upstream
pub fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(50))
        .timeout(timeout)
        .build()
        .unwrap()
}

/// One caller every this often, in the suites that record real traffic.
#[allow(dead_code)] // not every suite calls an upstream
pub const EVERY: Duration = Duration::from_millis(10);

/// Calls the upstream every [`EVERY`] for `phase`, each call in a task of its own
/// ([`guarded_get`]), its handle pushed to `running`.
#[allow(dead_code)] // not every suite calls an upstream
pub async fn calls_for(
    phase: Duration,
    guard: &Guard,
    client: &reqwest::Client,
    url: &str,
    running: &mut Vec<tokio::task::JoinHandle<bool>>,
) {
    let end = tokio::time::Instant::now() + phase;
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while tokio::time::Instant::now() < end {
        tick.tick().await;
        running.push(tokio::spawn(guarded_get(guard, client, url)));
    }
}

/// Records `calls` calls, one every 20 ms of tokio's (paused) clock, each in a task of
/// its own through a guard of `settings`' `sber` with the recorder writing to `path`;
/// `call(n)` is the n-th call's upstream.
#[allow(dead_code)] // not every suite records scripted calls
pub async fn record_scripted<F, C>(path: &std::path::Path, settings: &str, calls: u32, call: F)
where
    F: Fn(u32) -> C,
    C: Future<Output = Result<(), ()>> + Send + 'static,
{
    use outbound_guard_recorder::{Recorder, RecorderOptions};
    let settings = outbound_guard::Settings::parse(settings, "resilience.toml").unwrap();
    let recorder =
        std::sync::Arc::new(Recorder::to_file(path, RecorderOptions::default()).unwrap());
    let guard = Guard::builder(settings.system("sber").unwrap())
        .observer(recorder.clone())
        .build();
    let mut running = Vec::new();
    for n in 0..calls {
        let (guard, upstream) = (guard.clone(), call(n));
        running.push(tokio::spawn(async move {
            let _ = guard.call(upstream).await;
        }));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for call in running {
        call.await.unwrap();
    }
    recorder.flush();
}
