//! The inbound adapter: the HTTP API (axum). Handlers call the core through its ports
//! and leave the HTTP status of each error to [`crate::bootstrap::errors`].
//!
//! Two routers: [`router`], the public API, and [`admin_router`], the operator's
//! routes (forcing breakers, metrics), served on a separate listener bound to
//! 127.0.0.1 so that no client of the API can force a breaker open or read the
//! service's internals.
//!
//! On the admin listener the **control actions need a token**: `Authorization: Bearer
//! <token>`, the token being `DEMO_ADMIN_TOKEN` from the environment; a request
//! without it, or with another, is refused with 401 and changes nothing. With no
//! token configured every control action is refused (403): an operator listener that
//! anyone who reaches it may use is what the token is there to prevent, and "no token
//! set" must not mean "no token needed". The metrics scrape and readiness need no
//! token, so a Prometheus outside the pod may be let in to scrape without being able
//! to force a breaker.
//!
//! | route | router | calls | answers |
//! |---|---|---|---|
//! | `POST /orders` `{"customer_id","amount"}` | API | Sber `register` | 201 paid; 409 created but not paid |
//! | `GET /orders/{id}` | API | — | 200, 404 |
//! | `POST /orders/{id}/confirm` | API | Sber (`register` if unpaid, `confirm`) | 200; 503 + `Retry-After` when Sber is unavailable |
//! | `GET /customers/{id}` | API | customer `get` | 200, 404; 400 for an id that cannot be one (checked before any call); 503 when the customer system is unavailable |
//! | `GET /health/ready` | API and admin | — | every system's breaker; 200 while ready (an open breaker only degrades it) |
//! | `POST /admin/breakers/{system}/{action}` | admin | — | `force_open`, `disable`, `reset`; needs `Authorization: Bearer $DEMO_ADMIN_TOKEN` (401 without it, 403 when none is configured) |
//! | `GET /metrics` | admin | — | Prometheus text |

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metrics_exporter_prometheus::PrometheusHandle;
use outbound_guard::{Guards, ManualAction};
use serde::Deserialize;
use serde_json::json;

use crate::bootstrap::errors::ApiError;
use crate::core::domain::{CustomerId, OrderId};
use crate::core::orders::{Created, Orders};
use crate::core::ports::{CustomerPort, PaymentPort};

/// What the handlers share.
pub struct AppState<P, C> {
    /// The order use cases.
    pub orders: Orders<P>,
    /// The customer port.
    pub customers: Arc<C>,
    /// Every system's guard, for readiness.
    pub guards: Guards,
    /// The Prometheus exporter, if installed.
    pub metrics: Option<PrometheusHandle>,
    /// The token the operator's control actions need; with none they are refused.
    pub admin_token: Option<Arc<str>>,
}

impl<P, C> Clone for AppState<P, C> {
    fn clone(&self) -> Self {
        AppState {
            orders: self.orders.clone(),
            customers: Arc::clone(&self.customers),
            guards: self.guards.clone(),
            metrics: self.metrics.clone(),
            admin_token: self.admin_token.clone(),
        }
    }
}

/// The body of `POST /orders`.
#[derive(Debug, Deserialize)]
pub struct CreateOrder {
    /// Who orders.
    pub customer_id: String,
    /// How much, in kopecks.
    pub amount: u64,
}

/// The public API's routes over `state`: no operator route is among them.
pub fn router<P: PaymentPort, C: CustomerPort>(state: AppState<P, C>) -> Router {
    Router::new()
        .route("/orders", post(create_order::<P, C>))
        .route("/orders/{id}", get(get_order::<P, C>))
        .route("/orders/{id}/confirm", post(confirm_order::<P, C>))
        .route("/customers/{id}", get(get_customer::<P, C>))
        .route("/health/ready", get(ready::<P, C>))
        .with_state(state)
}

/// The operator's routes over `state`, for the admin listener only: breaker actions,
/// metrics, and readiness.
pub fn admin_router<P: PaymentPort, C: CustomerPort>(state: AppState<P, C>) -> Router {
    Router::new()
        .route("/admin/breakers/{system}/{action}", post(manual::<P, C>))
        .route("/metrics", get(metrics::<P, C>))
        .route("/health/ready", get(ready::<P, C>))
        .with_state(state)
}

async fn create_order<P: PaymentPort, C: CustomerPort>(
    State(state): State<AppState<P, C>>,
    Json(body): Json<CreateOrder>,
) -> Response {
    let Ok(customer_id) = CustomerId::parse(&body.customer_id) else {
        return ApiError::InvalidCustomerId.into_response();
    };
    match state.orders.create(customer_id, body.amount).await {
        Created::Paid(order) => {
            let location = format!("/orders/{}", order.id);
            (
                StatusCode::CREATED,
                [(header::LOCATION, location)],
                Json(order),
            )
                .into_response()
        }
        Created::NotPaid { order, error } => {
            ApiError::CreatedNotPaid { order, error }.into_response()
        }
    }
}

async fn get_order<P: PaymentPort, C: CustomerPort>(
    State(state): State<AppState<P, C>>,
    Path(id): Path<u64>,
) -> Response {
    match state.orders.get(OrderId(id)) {
        Some(order) => Json(order).into_response(),
        None => ApiError::OrderNotFound(OrderId(id)).into_response(),
    }
}

async fn confirm_order<P: PaymentPort, C: CustomerPort>(
    State(state): State<AppState<P, C>>,
    Path(id): Path<u64>,
) -> Result<Response, ApiError> {
    let order = state.orders.confirm(OrderId(id)).await?;
    Ok(Json(order).into_response())
}

async fn get_customer<P: PaymentPort, C: CustomerPort>(
    State(state): State<AppState<P, C>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = CustomerId::parse(&id).map_err(|_| ApiError::InvalidCustomerId)?;
    let customer = state.customers.get(&id).await?;
    Ok(Json(customer).into_response())
}

/// Readiness: every system's breaker (the runtime's [`Guards::health`]). An open
/// breaker degrades readiness without failing it: failing it would pull every replica
/// out of the load balancer while the payment provider is down, and the service still
/// answers (503 or 409, fast).
async fn ready<P: PaymentPort, C: CustomerPort>(State(state): State<AppState<P, C>>) -> Response {
    let health = state.guards.health();
    let status = StatusCode::from_u16(health.http_status()).unwrap_or(StatusCode::OK);
    (status, Json(health)).into_response()
}

/// An operator's action on a breaker: `force_open`, `disable` or `reset`
/// (the runtime's [`Breaker::act`](outbound_guard::Breaker::act), as
/// [`Guards::manual`] does); answers the system's state after it, and `changed`: `false`
/// when the breaker was already in the state asked for, which is then a no-op (nothing
/// logged or counted).
async fn manual<P: PaymentPort, C: CustomerPort>(
    State(state): State<AppState<P, C>>,
    Path((system, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal(state.admin_token.as_deref(), &headers) {
        return refused;
    }
    let action: ManualAction = match action.parse() {
        Ok(action) => action,
        Err(err) => {
            let body = json!({ "error": "unknown_action", "detail": format!("{err}") });
            return (StatusCode::BAD_REQUEST, Json(body)).into_response();
        }
    };
    match state.guards.get(&system) {
        Ok(guard) => {
            let changed = guard.breaker().act(action);
            let health = guard.health();
            Json(json!({
                "system": &*health.snapshot.system,
                "state": health.snapshot.state.as_str(),
                "status": health.status.as_str(),
                "changed": changed,
            }))
            .into_response()
        }
        Err(err) => (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": "unknown_system", "detail": err.to_string() })),
        )
            .into_response(),
    }
}

/// `None` when `headers` carry `Authorization: Bearer <token>` (the scheme in any case,
/// RFC 9110; the token compared in constant time); otherwise the refusal to answer.
fn refusal(token: Option<&str>, headers: &HeaderMap) -> Option<Response> {
    let Some(token) = token else {
        let body = json!({
            "error": "admin_disabled",
            "detail": "operator controls are off: start the service with DEMO_ADMIN_TOKEN set and send `Authorization: Bearer <token>`",
        });
        return Some((StatusCode::FORBIDDEN, Json(body)).into_response());
    };
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, credential)| credential.trim());
    match presented {
        Some(credential) if same(credential.as_bytes(), token.as_bytes()) => None,
        _ => {
            let body = json!({
                "error": "unauthorized",
                "detail": "operator controls need `Authorization: Bearer <DEMO_ADMIN_TOKEN>`",
            });
            Some(
                (
                    StatusCode::UNAUTHORIZED,
                    [(
                        header::WWW_AUTHENTICATE,
                        "Bearer realm=\"payments-demo admin\"",
                    )],
                    Json(body),
                )
                    .into_response(),
            )
        }
    }
}

/// `a == b` in a time that depends on the lengths only, not on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn metrics<P: PaymentPort, C: CustomerPort>(State(state): State<AppState<P, C>>) -> Response {
    // A breaker whose open duration has passed shows half-open, even with no traffic.
    state.guards.refresh();
    match &state.metrics {
        Some(handle) => (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            handle.render(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no metrics recorder installed\n").into_response(),
    }
}
