//! [`TransientHttp`] over answers and errors, and `reqwest::Client` as a tower `Service`
//! under the layer with `failure_if(TransientHttp)` against a real server on 127.0.0.1:
//! answers count by their status (5xx, 408, 429), errors by
//! `outbound_guard_reqwest::is_transient` (the read timeout counts); a caller's 4xx does
//! not.

use std::time::Duration;

use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use outbound_guard::{Guard, Settings};
use tokio::net::TcpListener;
use tower::{Layer, ServiceExt};

use crate::{Classify, GuardLayer, TransientHttp};

/// `/status/{code}` answers `code`; `/hang` never answers.
async fn server() -> String {
    let app =
        Router::new()
            .route(
                "/status/{code}",
                get(|Path(code): Path<u16>| async move {
                    (StatusCode::from_u16(code).unwrap(), "status")
                }),
            )
            .route("/hang", get(std::future::pending::<&'static str>));
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn a_reqwest_client_as_a_tower_service_classifies_by_transience() {
    let url = server().await;
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let guard = Guard::new(settings.system("sber").unwrap());
    let http = reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(2))
        .read_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let client = GuardLayer::new(guard.clone())
        .failure_if(TransientHttp)
        .layer(http);
    let call = |request: reqwest::Request| {
        let service = client.clone();
        async move { service.oneshot(request).await }
    };
    let get = |path: &str| {
        reqwest::Request::new(
            reqwest::Method::GET,
            format!("{url}{path}").parse().unwrap(),
        )
    };
    for path in ["/status/404", "/status/422", "/status/200"] {
        call(get(path)).await.unwrap();
    }
    assert_eq!(guard.breaker().snapshot().failures, 0);
    for path in ["/status/503", "/status/429", "/hang"] {
        let _ = tokio::time::timeout(Duration::from_secs(5), call(get(path)))
            .await
            .expect("bounded");
    }
    // 503, 429 and the read timeout.
    assert_eq!(guard.breaker().snapshot().failures, 3);
}

fn answer(status: u16) -> Result<http::Response<()>, std::io::Error> {
    let response = http::Response::builder().status(status).body(());
    response.map_err(std::io::Error::other)
}

#[test]
fn transient_http_counts_5xx_408_429_and_errors_only() {
    for status in [500, 502, 503, 504, 408, 429] {
        assert!(TransientHttp.is_failure(&answer(status)), "{status}");
    }
    for status in [200, 201, 204, 301, 400, 401, 403, 404, 409, 422] {
        assert!(!TransientHttp.is_failure(&answer(status)), "{status}");
    }
    let refused: Result<http::Response<()>, _> =
        Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
    assert!(TransientHttp.is_failure(&refused));
}
