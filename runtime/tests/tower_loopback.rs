//! The tower layer around a real HTTP client (hyper's, a `tower::Service`) talking to a
//! real server on 127.0.0.1: 5xx answers count as failures through the classifier,
//! the breaker opens, and the next request is refused without reaching the server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use outbound_guard::tower::{GuardLayer, GuardedError};
use outbound_guard::{Cause, Guard, State};
use tower::{Layer, Service, ServiceExt};

type Body = Empty<bytes::Bytes>;

async fn server(hits: Arc<AtomicUsize>) -> String {
    let app = Router::new()
        .route(
            "/down",
            get({
                let hits = hits.clone();
                move || async move {
                    hits.fetch_add(1, Ordering::SeqCst);
                    StatusCode::SERVICE_UNAVAILABLE
                }
            }),
        )
        .route(
            "/missing",
            get(move || async move {
                hits.fetch_add(1, Ordering::SeqCst);
                StatusCode::NOT_FOUND
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

mod common;

fn guard() -> Guard {
    common::guard("cb_min_calls = 3\ncb_window_size = 3\ncb_failure_rate = 0.5")
}

fn request(base: &str, path: &str) -> hyper::Request<Body> {
    hyper::Request::get(format!("{base}{path}"))
        .body(Empty::new())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_open_the_breaker_and_then_nothing_reaches_the_server() {
    let hits = Arc::new(AtomicUsize::new(0));
    let base = server(hits.clone()).await;
    let guard = guard();
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let mut service = GuardLayer::new(guard.clone())
        .failure_if(
            |result: &Result<
                hyper::Response<hyper::body::Incoming>,
                hyper_util::client::legacy::Error,
            >| {
                result
                    .as_ref()
                    .map_or(true, |r| r.status().is_server_error())
            },
        )
        .layer(client);

    // A 404 is an answer: it comes back and counts as a success.
    let missing = service
        .ready()
        .await
        .unwrap()
        .call(request(&base, "/missing"))
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(guard.breaker().snapshot().failures, 0);

    // 503s come back as they are, and count.
    for _ in 0..2 {
        let down = service
            .ready()
            .await
            .unwrap()
            .call(request(&base, "/down"))
            .await
            .unwrap();
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
    assert_eq!(guard.breaker().state(), State::Open);
    assert_eq!(hits.load(Ordering::SeqCst), 3);

    let refused = service
        .ready()
        .await
        .unwrap()
        .call(request(&base, "/down"))
        .await
        .unwrap_err();
    match refused {
        GuardedError::Guard(e) => assert!(matches!(e.cause(), Cause::Open { .. }), "{e}"),
        GuardedError::Service(e) => panic!("the request was sent: {e}"),
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        3,
        "a refused request reached the server"
    );
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_error_is_the_services_error_and_a_failure() {
    // A port nothing listens on: bind, read the port, close.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let guard = guard();
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let mut service = GuardLayer::new(guard.clone()).layer(client);
    let err = service
        .ready()
        .await
        .unwrap()
        .call(request(&base, "/"))
        .await
        .unwrap_err();
    assert!(matches!(err, GuardedError::Service(_)), "{err}");
    assert_eq!(guard.breaker().snapshot().failures, 1);
    assert_eq!(guard.in_flight(), 0);
}
