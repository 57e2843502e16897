use std::sync::OnceLock;
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use outbound_guard::{Cause, Guards, ManualAction};
use testing_example::{PaymentError, SberAdapter};

/// A fake Sber on a free port of 127.0.0.1: every payment answered `status` after
/// `delay`. Returns its base URL.
async fn fake_sber(status: StatusCode, delay: Duration) -> String {
    let pay = move || async move {
        tokio::time::sleep(delay).await;
        (status, "paid-42")
    };
    let app = Router::new().route("/payments/{id}", post(pay));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// The metrics recorder: one per process, installed before any `Guards` is built.
fn metrics() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| PrometheusBuilder::new().install_recorder().unwrap())
}

/// The service's own resilience.toml, pointed at `url`, with timings a test can wait for.
fn guards(url: &str) -> Guards {
    metrics();
    let settings = outbound_guard::settings!(
        env = [
            ("CLIENT_SBER__BASE_URL", url),
            ("CLIENT_SBER__CONNECT_TIMEOUT", "50ms"),
            ("CLIENT_SBER__READ_TIMEOUT", "200ms"),
            ("CLIENT_SBER__TOTAL_TIMEOUT", "300ms"),
            ("CLIENT_SBER__CB_MIN_CALLS", "4"),
        ]
    )
    .unwrap();
    Guards::new(&settings)
}

#[tokio::test]
async fn a_hung_sber_is_the_ports_http_error_and_counts() {
    let guards = guards(&fake_sber(StatusCode::OK, Duration::from_secs(5)).await);
    let sber = guards.try_adapter(SberAdapter::new).unwrap();
    match sber.register(42).await {
        Err(PaymentError::Http(e)) => assert!(e.is_timeout(), "{e}"),
        other => panic!("expected reqwest's timeout at read_timeout, got {other:?}"),
    }
    assert_eq!(guards.get("sber").unwrap().breaker().snapshot().failures, 1);
}

#[tokio::test]
async fn failures_open_the_breaker_and_callers_get_a_503_answer() {
    let url = fake_sber(StatusCode::SERVICE_UNAVAILABLE, Duration::ZERO).await;
    let guards = guards(&url);
    let sber = guards.try_adapter(SberAdapter::new).unwrap();
    for _ in 0..4 {
        assert!(matches!(
            sber.register(42).await,
            Err(PaymentError::Http(_))
        ));
    }
    let Err(PaymentError::Unavailable(refused)) = sber.register(42).await else {
        panic!("four failures of four open the breaker");
    };
    assert!(matches!(refused.cause(), Cause::Open { .. }));
    assert_eq!(refused.http_status(), 503);
    assert_eq!(refused.http_retry_after(), Duration::from_secs(30));
}

#[tokio::test]
async fn an_operator_forces_states_on_real_time() {
    let guards = guards(&fake_sber(StatusCode::OK, Duration::ZERO).await);
    let sber = guards.try_adapter(SberAdapter::new).unwrap();
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    let Err(PaymentError::Unavailable(refused)) = sber.register(42).await else {
        panic!("forced open refuses every call");
    };
    assert_eq!(refused.cause(), &Cause::ForcedOpen);
    guards.manual("sber", ManualAction::Reset).unwrap();
    assert_eq!(sber.register(42).await.unwrap(), "paid-42");
    let series = metrics().render();
    assert!(series.contains("resilience_calls_total{system=\"sber\",outcome=\"success\"}"));
}
