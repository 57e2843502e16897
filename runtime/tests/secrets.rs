//! Credentials in a system's `base_url` never reach what the runtime shows: `Debug` of
//! the settings, a guard and the guards, the tracing events and spans from startup
//! through transitions and calls, the health JSON, and the metrics' labels. The guard
//! still hands the adapter the real URL.
//!
//! Runs with the features that show things (`cargo test -p outbound-guard
//! --all-features`).
#![cfg(all(feature = "tracing", feature = "serde", feature = "metrics"))]

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use outbound_guard::{Guards, ManualAction, Settings, State};

const URL: &str = "http://svc-user:hunter2@pay.example/api?token=t0k3n";

fn assert_no_secret(what: &str, text: &str) {
    assert!(
        !text.contains("hunter2") && !text.contains("t0k3n"),
        "{what} shows a secret: {text}"
    );
}

/// Everything every span and event recorded, as text.
fn log() -> &'static Arc<Mutex<String>> {
    static LOG: OnceLock<Arc<Mutex<String>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(String::new()));
        tracing::subscriber::set_global_default(Capture(Arc::clone(&log)))
            .expect("the only subscriber of this test binary");
        log
    })
}

struct Capture(Arc<Mutex<String>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut log = self.0.lock().unwrap();
        let _ = write!(log, "\nspan {}:", span.metadata().name());
        span.record(&mut Fields(&mut log));
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Fields(&mut self.0.lock().unwrap()));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut log = self.0.lock().unwrap();
        let _ = write!(log, "\nevent {}:", event.metadata().level());
        event.record(&mut Fields(&mut log));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test(start_paused = true)]
async fn nothing_the_runtime_shows_holds_the_credentials() {
    let log = log();
    let text = format!(
        "[systems.sber]\nbase_url = \"{URL}\"\ncb_window_size = 2\ncb_min_calls = 2\ncb_open_duration = 1\ncb_half_open_calls = 1\n"
    );
    let settings = Settings::parse(&text, "resilience.toml").unwrap();
    let recorder = outbound_guard_test_recorder::TestRecorder::new();
    let guards = metrics::with_local_recorder(&*recorder, || Guards::new(&settings));
    let sber = guards.get("sber").unwrap();
    assert_eq!(sber.settings().base_url(), Some(URL), "the adapter's URL");

    // Every transition, the operator's included, and calls of every outcome.
    for _ in 0..2 {
        let _ = sber.call(async { Err::<(), _>("boom") }).await;
    }
    assert_eq!(sber.breaker().state(), State::Open);
    let _ = sber.call(async { Ok::<_, ()>(()) }).await;
    tokio::time::advance(Duration::from_secs(2)).await;
    sber.call(async { Ok::<_, ()>(()) }).await.unwrap().unwrap();
    for action in [
        ManualAction::ForceOpen,
        ManualAction::Disable,
        ManualAction::Reset,
    ] {
        let health = guards.manual("sber", action).unwrap();
        assert_no_secret("the health after a manual action", &format!("{health:?}"));
    }

    assert_no_secret("Debug of the settings", &format!("{settings:?}"));
    assert_no_secret(
        "Debug of the system's settings",
        &format!("{:?}", sber.settings()),
    );
    assert_no_secret("Debug of the guard", &format!("{sber:?}"));
    assert_no_secret("{:#?} of the guard", &format!("{sber:#?}"));
    assert_no_secret("Debug of the guards", &format!("{guards:?}"));
    assert_no_secret("{:#?} of the guards", &format!("{guards:#?}"));
    assert_no_secret("Debug of the breaker", &format!("{:?}", sber.breaker()));

    let health = guards.health();
    assert_no_secret("Debug of the health", &format!("{health:?}"));
    assert_no_secret("the health JSON", &serde_json::to_string(&health).unwrap());

    let series = recorder.all_series().join("\n");
    assert!(series.contains(r#"system="sber""#), "{series}");
    assert_no_secret("the metrics' series", &series);

    let logged = log.lock().unwrap().clone();
    assert!(
        logged.contains("forced open"),
        "the capture works: {logged}"
    );
    assert_no_secret("the tracing events and spans", &logged);
}
