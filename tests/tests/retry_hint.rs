//! An annotated adapter whose port error keeps the upstream's `Retry-After`, handed to
//! the breaker by the attribute's `retry_after = …`, against a real server on 127.0.0.1
//! answering 429 and 503 with it: the breaker stays open as long as the upstream asked.

use std::time::Duration;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::routing::get;
use axum::Router;
use outbound_guard::{CircuitBreakerError, Guard, Settings, State};

#[derive(Debug, thiserror::Error)]
enum BusyError {
    #[error("the system asked to come back later")]
    Busy { retry_after: Option<Duration> },
    #[error("unavailable: {0}")]
    Unavailable(CircuitBreakerError),
    #[error("transport: {0}")]
    Transport(String),
}

impl BusyError {
    fn unavailable(error: CircuitBreakerError) -> Self {
        BusyError::Unavailable(error)
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            BusyError::Busy { retry_after } => *retry_after,
            _ => None,
        }
    }
}

#[derive(outbound_guard::Guarded, Clone)]
#[guarded(system = "sber")]
struct BusyAdapter {
    guard: Guard,
    http: reqwest::Client,
    base: String,
}

impl BusyAdapter {
    #[outbound_guard::circuit_breaker(
        error_map = BusyError::unavailable,
        retry_after = BusyError::retry_after
    )]
    async fn get(&self, path: &str) -> Result<(), BusyError> {
        let response = self
            .http
            .get(format!("{}/{path}", self.base))
            .send()
            .await
            .map_err(|e| BusyError::Transport(e.to_string()))?;
        if response.status().is_success() {
            return Ok(());
        }
        let retry_after = outbound_guard::http_status::retry_after(
            response.status().as_u16(),
            response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .map(reqwest::header::HeaderValue::as_bytes),
        );
        Err(BusyError::Busy { retry_after })
    }
}

/// `/{code}/{after}` answers `code` with `Retry-After: after`.
async fn server() -> String {
    let app = Router::new().route(
        "/{code}/{after}",
        get(|Path((code, after)): Path<(u16, String)>| async move {
            (
                StatusCode::from_u16(code).unwrap(),
                [(header::RETRY_AFTER, after)],
                "come back later",
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

#[tokio::test]
async fn the_attributes_retry_after_keeps_the_breaker_open_as_the_upstream_asked() {
    let base = server().await;
    for (path, open_for) in [("429/120", 120), ("503/45", 45), ("429/garbage", 30)] {
        let settings = Settings::parse(
            "[systems.sber]\ncb_window_size = 2\ncb_min_calls = 2",
            "inline",
        )
        .unwrap();
        let adapter = BusyAdapter {
            guard: Guard::new(settings.system("sber").unwrap()),
            http: reqwest::Client::builder().no_proxy().build().unwrap(),
            base: base.clone(),
        };
        for _ in 0..2 {
            let answer = tokio::time::timeout(Duration::from_secs(10), adapter.get(path))
                .await
                .expect("bounded");
            assert!(matches!(answer, Err(BusyError::Busy { .. })), "{answer:?}");
        }
        let snapshot = adapter.guard.breaker().snapshot();
        assert_eq!(snapshot.state, State::Open, "{path}");
        assert_eq!(
            snapshot.open_for,
            Some(Duration::from_secs(open_for)),
            "{path}"
        );
        let refused = adapter.get(path).await.unwrap_err();
        assert!(matches!(refused, BusyError::Unavailable(_)), "{refused:?}");
    }
}
