//! The fragments of `docs/adapters.md`, `docs/operations.md` and `docs/settings.md`,
//! compiled and run here: each Rust block of those pages is a run of lines of this file
//! (or of the demo's `build.rs`), as the tests at the end check.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use outbound_guard::{
    CircuitBreakerError, Guard, Guarded, Guards, Observer, ReadinessPolicy, Settings, State,
};

#[path = "../../doc_snippets.rs"]
mod doc_snippets;

use doc_snippets::{blocks, read, shown_in};

// docs/adapters.md: a port, its error and an adapter, for the blocks to guard.

#[derive(Debug, PartialEq)]
pub enum PaymentPortError {
    SystemUnavailable(CircuitBreakerError),
    Declined,
}

impl PaymentPortError {
    fn system_unavailable(error: CircuitBreakerError) -> Self {
        PaymentPortError::SystemUnavailable(error)
    }

    fn is_outage(&self) -> bool {
        matches!(self, PaymentPortError::SystemUnavailable(_))
    }
}

pub struct Order(u64);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaymentRef(u64);

#[allow(async_fn_in_trait)]
pub trait PaymentPort {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError>;
    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError>;
    fn last_payment(&self) -> Option<PaymentRef>;
}

#[derive(Default)]
pub struct Cache(std::sync::Mutex<Option<PaymentRef>>);

impl Cache {
    fn last(&self) -> Option<PaymentRef> {
        *self.0.lock().unwrap()
    }
}

#[derive(Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: Guard,
    cache: Cache,
}

impl SberAdapter {
    async fn post_payment(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        *self.cache.0.lock().unwrap() = Some(PaymentRef(order.0));
        Ok(PaymentRef(order.0))
    }

    async fn post_confirmation(&self, _: &PaymentRef) -> Result<(), PaymentPortError> {
        Ok(())
    }

    async fn post_refund(&self, _: &PaymentRef) -> Result<(), PaymentPortError> {
        Err(PaymentPortError::Declined)
    }
}

#[outbound_guard::adapter(
    system = "sber",
    error_map = PaymentPortError::system_unavailable,
    failure_if = PaymentPortError::is_outage,
)]
impl PaymentPort for SberAdapter {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        self.post_payment(order).await
    }

    #[circuit_breaker(slow_as_error)] // refines the block's arguments
    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
        self.post_confirmation(payment).await
    }

    #[unguarded(reason = "reads the adapter's own cache, no I/O")] // opts out, with a reason
    fn last_payment(&self) -> Option<PaymentRef> {
        self.cache.last()
    }
}

mod card {
    use super::{PaymentPortError, PaymentRef, SberAdapter};

    use outbound_guard::circuit_breaker;

    impl SberAdapter {
        #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
        pub async fn refund(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
            self.post_refund(payment).await
        }
    }
}

#[tokio::test]
async fn the_adapters_page_guards_every_method_it_shows() {
    let settings = Settings::parse("[systems.sber]\n", "inline").unwrap();
    let guards = Guards::new(&settings);
    let sber = guards
        .adapter(|guard| SberAdapter {
            guard,
            cache: Cache::default(),
        })
        .unwrap();
    let payment = sber.register(&Order(7)).await.unwrap();
    assert_eq!(sber.confirm(&payment).await, Ok(()));
    assert_eq!(sber.last_payment(), Some(PaymentRef(7)));
    // A declined refund is the system answering: not counted (the card's form counts
    // every `Err`, having no `failure_if`).
    assert_eq!(sber.refund(&payment).await, Err(PaymentPortError::Declined));
    guards.get("sber").unwrap().breaker().force_open();
    let refused = sber.register(&Order(8)).await.unwrap_err();
    assert!(matches!(refused, PaymentPortError::SystemUnavailable(e) if e.http_status() == 503));
    let refused = sber.refund(&payment).await.unwrap_err();
    assert!(matches!(refused, PaymentPortError::SystemUnavailable(_)));
}

// docs/operations.md

struct MyAuditLog;

impl Observer for MyAuditLog {}

fn operations(settings: Settings) -> Result<(Guards, Response), Box<dyn Error>> {
    let guards = Guards::builder(&settings)
        .observer(Arc::new(MyAuditLog)) // any outbound_guard::Observer
        .readiness(ReadinessPolicy::DegradeOnOpen) // the default
        .build(); // .tracing(false) / .metrics(false) to opt out

    // GET /health/ready, in axum: 200 while ready, 503 when not (`Json` needs the feature `serde`).
    let health = guards.health();
    let status = StatusCode::from_u16(health.http_status()).unwrap_or(StatusCode::OK);
    let ready = (status, Json(health)).into_response();

    guards.manual("sber", "force_open".parse()?)?; // POST /admin/breakers/sber/force_open
    Ok((guards, ready))
}

fn reloading() -> Result<(), Box<dyn Error>> {
    let settings = outbound_guard::settings!()?;
    let guards = Guards::new(&settings);
    // Feature `watch`: reload when the mounted file changes.
    let _watcher = match std::env::var_os(outbound_guard::settings::PATH_VARIABLE) {
        Some(path) => Some(guards.watch(path)?),
        None => None,
    };
    Ok(())
}

#[test]
fn the_operations_page_answers_readiness_and_forces_open() {
    let settings = Settings::parse("[systems.sber]\n", "inline").unwrap();
    let (guards, ready) = operations(settings).unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    assert_eq!(
        guards.get("sber").unwrap().breaker().state(),
        State::ForcedOpen
    );
    reloading().unwrap();
}

// The check: every Rust block of the pages is shown here.

#[test]
fn every_rust_block_of_the_pages_is_compiled_here() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = [
        read(&dir.join("tests/docs.rs")),
        read(&dir.join("build.rs")),
    ];
    for page in ["adapters.md", "operations.md", "settings.md"] {
        let text = read(&dir.join("../../docs").join(page));
        for block in blocks(&text, "rust") {
            assert!(
                sources.iter().any(|source| shown_in(&block, source)),
                "a Rust block of docs/{page} that examples/payments-demo/tests/docs.rs does not compile:\n{block}"
            );
        }
    }
}
