//! The fake Sber and customer systems the demo runs against: their routes, served on
//! 127.0.0.1 by the suite's [`FakeUpstream`], whose faults (a share of calls failing with
//! 500, added latency) the scenario and the tests switch while they run;
//! `PUT /_faults?fail_share=0.5&latency_ms=800` switches them by hand in `--serve` mode.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
pub use outbound_guard_tests::upstream::{FakeUpstream, Faults};
use serde::Deserialize;
use serde_json::json;
use tokio::net::TcpListener;

/// Amounts above this many kopecks are declined by the fake Sber (HTTP 402).
pub const SBER_LIMIT: u64 = 10_000_000;

#[derive(Clone, Default)]
struct Payments {
    known: Arc<Mutex<HashSet<String>>>,
    next: Arc<AtomicU64>,
}

/// Binds an ephemeral port on 127.0.0.1.
///
/// # Errors
///
/// If no port can be bound.
pub async fn bind() -> std::io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", 0)).await
}

/// The fake Sber on `listener`: `POST /payments` (201 with a `payment_id`, 402 above
/// [`SBER_LIMIT`]) and `POST /payments/{id}/confirm` (200, 404).
///
/// # Errors
///
/// If the listener's address cannot be read.
pub fn sber(listener: TcpListener) -> std::io::Result<FakeUpstream> {
    let router = Router::new()
        .route("/payments", post(sber_register))
        .route("/payments/{id}/confirm", post(sber_confirm))
        .with_state(Payments::default());
    FakeUpstream::serve(listener, router)
}

/// The fake customer system on `listener`: `GET /customers/{id}`, 200 for ids
/// starting with `c-`, 404 otherwise.
///
/// # Errors
///
/// If the listener's address cannot be read.
pub fn customer(listener: TcpListener) -> std::io::Result<FakeUpstream> {
    FakeUpstream::serve(
        listener,
        Router::new().route("/customers/{id}", get(customer_get)),
    )
}

#[derive(Deserialize)]
struct RegisterBody {
    order_id: u64,
    amount: u64,
}

async fn sber_register(State(state): State<Payments>, Json(body): Json<RegisterBody>) -> Response {
    if body.amount > SBER_LIMIT {
        return (
            StatusCode::PAYMENT_REQUIRED,
            Json(json!({ "error": "declined", "reason": "amount above the card's limit" })),
        )
            .into_response();
    }
    let n = state.next.fetch_add(1, Ordering::Relaxed) + 1;
    let id = format!("sber-{}-{n}", body.order_id);
    state
        .known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(id.clone());
    (StatusCode::CREATED, Json(json!({ "payment_id": id }))).into_response()
}

async fn sber_confirm(State(state): State<Payments>, Path(id): Path<String>) -> Response {
    let known = state
        .known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .contains(&id);
    if known {
        Json(json!({ "payment_id": id, "status": "confirmed" })).into_response()
    } else {
        (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": "unknown_payment" })),
        )
            .into_response()
    }
}

async fn customer_get(Path(id): Path<String>) -> Response {
    if let Some(number) = id.strip_prefix("c-") {
        let name = format!("Customer {number}");
        Json(json!({ "id": id, "name": name })).into_response()
    } else {
        (StatusCode::NOT_FOUND, Json(json!({ "error": "not_found" }))).into_response()
    }
}
