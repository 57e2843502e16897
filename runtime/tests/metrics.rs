//! With the `metrics` feature on, `Guards::new` alone registers and records every
//! system's metrics: what a service that turns the feature on gets without asking.
//!
//! The detailed metric tests are the library's unit tests (`src/metrics/tests.rs`), which
//! run under a plain `cargo test` whether or not the feature is on; this file only runs
//! when it is (e.g. `cargo test -p outbound-guard --features metrics`, or a workspace build
//! where another crate enables `outbound-guard/metrics`).
#![cfg(feature = "metrics")]

use outbound_guard::{Guards, ManualAction, Settings};
use outbound_guard_test_recorder::TestRecorder;

// The series' names as dashboards and alerts write them (only the histogram's is a
// public constant).
const BULKHEAD_PERMITS: &str = "resilience_bulkhead_permits";
const CALLS_TOTAL: &str = "resilience_calls_total";
const STATE: &str = "resilience_state";

#[tokio::test(start_paused = true)]
async fn guards_new_registers_every_system_at_startup_and_records_calls() {
    let settings =
        Settings::parse("[systems.sber]\n[systems.customer]", "resilience.toml").unwrap();
    let recorder = TestRecorder::new();
    let guards = metrics::with_local_recorder(&*recorder, || Guards::new(&settings));

    for system in ["sber", "customer"] {
        let calls = format!(r#"{CALLS_TOTAL}{{outcome="success",system="{system}"}}"#);
        assert_eq!(recorder.counter(&calls), Some(0), "{system}");
        let closed = format!(r#"{STATE}{{state="closed",system="{system}"}}"#);
        assert_eq!(recorder.gauge(&closed), Some(1.0), "{system}");
        let permits = format!(r#"{BULKHEAD_PERMITS}{{system="{system}"}}"#);
        assert_eq!(recorder.gauge(&permits), Some(8.0), "{system}");
    }

    let sber = guards.get("sber").unwrap();
    sber.call(async { Ok::<_, ()>(()) }).await.unwrap().unwrap();
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert!(sber.call(async { Ok::<_, ()>(()) }).await.is_err());

    let count = |series: &str| recorder.counter(series);
    assert_eq!(
        count(r#"resilience_calls_total{outcome="success",system="sber"}"#),
        Some(1)
    );
    assert_eq!(
        count(r#"resilience_calls_total{outcome="rejected",system="sber"}"#),
        Some(1)
    );
    assert_eq!(
        count(r#"resilience_rejections_total{reason="forced_open",system="sber"}"#),
        Some(1)
    );
    assert_eq!(
        count(r#"resilience_transitions_total{from="closed",system="sber",to="forced_open"}"#),
        Some(1)
    );
    assert_eq!(
        recorder.gauge(r#"resilience_state{state="forced_open",system="sber"}"#),
        Some(1.0)
    );
    assert_eq!(
        count(r#"resilience_calls_total{outcome="success",system="customer"}"#),
        Some(0)
    );
}
