//! The adapter over the generated client against a real server on 127.0.0.1: a 500 with
//! a proxy's HTML page opens the breaker although the spec declares `5XX` as a JSON
//! `Problem`; a 404, with a JSON or an HTML body, never does.

use axum::http::{header, StatusCode};
use axum::routing::get;
use axum::Router;
use generated_example::{Customer, CustomerAdapter, CustomerPortError};
use outbound_guard::{Guarded, Guards, Settings, State};
use tokio::net::TcpListener;

const HTML: &str = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>";

/// The customer system: `/customers/42` is a customer, `/customers/html-500` a proxy's
/// HTML error page, `/customers/json-500` the system's own `Problem`, `/customers/gone`
/// a 404 `Problem`, `/customers/html-404` a 404 HTML page.
async fn server() -> String {
    let app = Router::new()
        .route(
            "/customers/42",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"id":"42","name":"Ada"}"#,
                )
            }),
        )
        .route(
            "/customers/html-500",
            get(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(header::CONTENT_TYPE, "text/html")],
                    HTML,
                )
            }),
        )
        .route(
            "/customers/json-500",
            get(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"message":"database down"}"#,
                )
            }),
        )
        .route(
            "/customers/gone",
            get(|| async {
                (
                    StatusCode::NOT_FOUND,
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"message":"no such customer"}"#,
                )
            }),
        )
        .route(
            "/customers/html-404",
            get(|| async {
                (
                    StatusCode::NOT_FOUND,
                    [(header::CONTENT_TYPE, "text/html")],
                    HTML,
                )
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

/// The adapter over `base_url`, with a breaker that may open after 5 calls.
fn adapter(base_url: &str) -> CustomerAdapter {
    let text = format!(
        "[systems.customer]\nbase_url = \"{base_url}\"\ncb_window_size = 10\ncb_min_calls = 5\n"
    );
    let settings = Settings::parse(&text, "inline").unwrap();
    Guards::new(&settings)
        .try_adapter(CustomerAdapter::new)
        .unwrap()
}

#[tokio::test]
async fn a_customer_comes_through_the_generated_client() {
    let customers = adapter(&server().await);
    assert_eq!(
        customers.customer("42").await.unwrap(),
        Customer {
            id: "42".into(),
            name: "Ada".into()
        }
    );
}

#[tokio::test]
async fn a_500_with_an_html_body_opens_the_breaker() {
    let customers = adapter(&server().await);
    for call in 0..5 {
        let error = customers.customer("html-500").await.unwrap_err();
        // The status survived the JSON `Problem` the spec declares for `5XX`.
        let CustomerPortError::Api(api) = &error else {
            panic!("call {call}: {error:?}");
        };
        assert_eq!(api.status().map(|s| s.as_u16()), Some(500), "{error:?}");
        assert!(error.is_outage(), "{error:?}");
    }
    assert_eq!(customers.guard().breaker().state(), State::Open);
    let refused = customers.customer("42").await.unwrap_err();
    assert!(
        matches!(refused, CustomerPortError::Unavailable(_)),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_500_with_the_declared_json_body_counts_too() {
    let customers = adapter(&server().await);
    for _ in 0..5 {
        let error = customers.customer("json-500").await.unwrap_err();
        assert!(error.is_outage(), "{error:?}");
    }
    assert_eq!(customers.guard().breaker().state(), State::Open);
}

#[tokio::test]
async fn a_404_never_opens_it_whatever_its_body() {
    let customers = adapter(&server().await);
    for _ in 0..15 {
        let error = customers.customer("gone").await.unwrap_err();
        assert!(matches!(error, CustomerPortError::NotFound), "{error:?}");
        // An HTML 404 does not decode as the declared `Problem`: a contract mismatch,
        // not an outage, and its status (not one that counts) is not needed to say so.
        let error = customers.customer("html-404").await.unwrap_err();
        assert!(
            matches!(
                error,
                CustomerPortError::Api(progenitor_client::Error::InvalidResponsePayload(..))
            ),
            "{error:?}"
        );
        assert!(!error.is_outage(), "{error:?}");
    }
    assert_eq!(customers.guard().breaker().state(), State::Closed);
    assert!(customers.customer("42").await.is_ok());
}
