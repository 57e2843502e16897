//! In-process fake Sber and customer servers on 127.0.0.1, with switchable faults:
//! fail a share of calls with 500, add latency. The scenario and the tests drive the
//! service against them; `PUT /_faults?fail_share=0.5&latency_ms=800` switches them by
//! hand in `--serve` mode.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A fake system's faults, switchable while it runs.
///
/// Failures are spread evenly, not drawn at random: with a share of 0.5 every second
/// call fails, so any three consecutive calls include a failure.
#[derive(Debug, Default)]
pub struct Faults {
    fail_permille: AtomicU32,
    latency_us: AtomicU64,
    counter: AtomicU64,
    hits: AtomicU64,
}

impl Faults {
    /// Fails `share` (0 to 1) of the calls from now on with HTTP 500.
    pub fn set_fail_share(&self, share: f64) {
        let permille = (share.clamp(0.0, 1.0) * 1000.0).round() as u32;
        self.fail_permille.store(permille, Ordering::Relaxed);
    }

    /// Delays every answer by `latency` from now on.
    pub fn set_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.latency_us.store(micros, Ordering::Relaxed);
    }

    /// No failures, no added latency.
    pub fn heal(&self) {
        self.set_fail_share(0.0);
        self.set_latency(Duration::ZERO);
    }

    /// The share of calls that fail.
    pub fn fail_share(&self) -> f64 {
        f64::from(self.fail_permille.load(Ordering::Relaxed)) / 1000.0
    }

    /// The added latency.
    pub fn latency(&self) -> Duration {
        Duration::from_micros(self.latency_us.load(Ordering::Relaxed))
    }

    /// How many requests reached the server (faults endpoint aside).
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Counts the request, waits the latency, and says whether to fail it.
    async fn apply(&self) -> bool {
        self.hits.fetch_add(1, Ordering::Relaxed);
        let latency = self.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        let permille = u64::from(self.fail_permille.load(Ordering::Relaxed));
        if permille == 0 {
            return false;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        (n + 1) * permille / 1000 > n * permille / 1000
    }
}

/// A running fake server; stopped when dropped.
#[derive(Debug)]
pub struct FakeServer {
    addr: SocketAddr,
    faults: Arc<Faults>,
    task: JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct FakeState {
    faults: Arc<Faults>,
    payments: Arc<Mutex<HashSet<String>>>,
    next: Arc<AtomicU64>,
}

/// Amounts above this many kopecks are declined by the fake Sber (HTTP 402).
pub const SBER_LIMIT: u64 = 10_000_000;

impl FakeServer {
    /// Binds an ephemeral port on 127.0.0.1.
    pub async fn bind() -> std::io::Result<TcpListener> {
        TcpListener::bind(("127.0.0.1", 0)).await
    }

    /// The fake Sber on `listener`: `POST /payments` (201 with a `payment_id`, 402 above
    /// [`SBER_LIMIT`]) and `POST /payments/{id}/confirm` (200, 404).
    pub fn sber(listener: TcpListener) -> std::io::Result<Self> {
        let router = Router::new()
            .route("/payments", post(sber_register))
            .route("/payments/{id}/confirm", post(sber_confirm));
        Self::start(listener, router)
    }

    /// The fake customer system on `listener`: `GET /customers/{id}`, 200 for ids
    /// starting with `c-`, 404 otherwise.
    pub fn customer(listener: TcpListener) -> std::io::Result<Self> {
        let router = Router::new().route("/customers/{id}", get(customer_get));
        Self::start(listener, router)
    }

    fn start(listener: TcpListener, router: Router<FakeState>) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let state = FakeState {
            faults: Arc::new(Faults::default()),
            payments: Arc::default(),
            next: Arc::default(),
        };
        let faults = Arc::clone(&state.faults);
        let router = router
            .route("/_faults", get(faults_get).put(faults_put))
            .with_state(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(FakeServer { addr, faults, task })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its faults.
    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }
}

fn internal_error() -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({ "error": "internal", "detail": "injected fault" })),
    )
        .into_response()
}

#[derive(Deserialize)]
struct RegisterBody {
    order_id: u64,
    amount: u64,
}

async fn sber_register(State(state): State<FakeState>, Json(body): Json<RegisterBody>) -> Response {
    if state.faults.apply().await {
        return internal_error();
    }
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
        .payments
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id.clone());
    (StatusCode::CREATED, Json(json!({ "payment_id": id }))).into_response()
}

async fn sber_confirm(State(state): State<FakeState>, Path(id): Path<String>) -> Response {
    if state.faults.apply().await {
        return internal_error();
    }
    let known = state
        .payments
        .lock()
        .unwrap_or_else(|e| e.into_inner())
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

async fn customer_get(State(state): State<FakeState>, Path(id): Path<String>) -> Response {
    if state.faults.apply().await {
        return internal_error();
    }
    if let Some(number) = id.strip_prefix("c-") {
        let name = format!("Customer {number}");
        Json(json!({ "id": id, "name": name })).into_response()
    } else {
        (StatusCode::NOT_FOUND, Json(json!({ "error": "not_found" }))).into_response()
    }
}

#[derive(Deserialize)]
struct FaultsQuery {
    fail_share: Option<f64>,
    latency_ms: Option<u64>,
}

fn faults_json(faults: &Faults) -> Json<serde_json::Value> {
    Json(json!({
        "fail_share": faults.fail_share(),
        "latency_ms": faults.latency().as_millis() as u64,
        "hits": faults.hits(),
    }))
}

async fn faults_get(State(state): State<FakeState>) -> impl IntoResponse {
    faults_json(&state.faults)
}

async fn faults_put(
    State(state): State<FakeState>,
    Query(q): Query<FaultsQuery>,
) -> impl IntoResponse {
    if let Some(share) = q.fail_share {
        state.faults.set_fail_share(share);
    }
    if let Some(ms) = q.latency_ms {
        state.faults.set_latency(Duration::from_millis(ms));
    }
    faults_json(&state.faults)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn failures_are_spread_evenly() {
        let faults = Faults::default();
        faults.set_fail_share(0.5);
        let mut pattern = Vec::new();
        for _ in 0..6 {
            pattern.push(faults.apply().await);
        }
        assert_eq!(pattern, [false, true, false, true, false, true]);
        faults.set_fail_share(0.3);
        let mut failed = 0;
        for _ in 0..100 {
            failed += u32::from(faults.apply().await);
        }
        assert_eq!(failed, 30);
        faults.heal();
        assert!(!faults.apply().await);
        assert_eq!(faults.hits(), 107);
    }
}
