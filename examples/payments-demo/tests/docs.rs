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

// The stand-ins for the adapter's HTTP calls: `async` as those are, since the pages'
// blocks await them.
#[allow(clippy::unused_async)]
impl SberAdapter {
    async fn post_payment(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        Ok(Self::post_payment_to(&self.cache, order))
    }

    fn post_payment_to(cache: &Cache, order: &Order) -> PaymentRef {
        *cache.0.lock().unwrap() = Some(PaymentRef(order.0));
        PaymentRef(order.0)
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
    guards
        .get("sber")
        .unwrap()
        .breaker()
        .act(outbound_guard::ManualAction::ForceOpen);
    let refused = sber.register(&Order(8)).await.unwrap_err();
    assert!(matches!(refused, PaymentPortError::SystemUnavailable(e) if e.http_status() == 503));
    let refused = sber.refund(&payment).await.unwrap_err();
    assert!(matches!(refused, PaymentPortError::SystemUnavailable(_)));
}

// runtime/README.md: the card on a port of one method.
mod runtime_readme {
    use super::{Cache, Order, PaymentPortError, PaymentRef};
    use outbound_guard::{Guard, Guarded};

    #[allow(async_fn_in_trait)]
    pub trait PaymentPort {
        async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError>;
    }

    #[derive(Guarded)]
    pub struct SberAdapter {
        pub guard: Guard,
        pub cache: Cache,
    }

    // The HTTP call's stand-in, awaited as the README's block awaits it.
    #[allow(clippy::unused_async)]
    impl SberAdapter {
        async fn post_payment(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
            Ok(super::SberAdapter::post_payment_to(&self.cache, order))
        }
    }

    use outbound_guard::circuit_breaker;

    impl PaymentPort for SberAdapter {
        #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
        async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
            self.post_payment(order).await // the HTTP call, with `?` and `return` as usual
        }
    }
}

#[tokio::test]
async fn the_runtime_readmes_adapter_is_guarded() {
    use runtime_readme::PaymentPort as _;
    let settings = Settings::parse("[systems.sber]\n", "inline").unwrap();
    let guards = Guards::new(&settings);
    let sber = runtime_readme::SberAdapter {
        guard: guards.get("sber").unwrap(),
        cache: Cache::default(),
    };
    assert_eq!(sber.register(&Order(3)).await, Ok(PaymentRef(3)));
    guards
        .get("sber")
        .unwrap()
        .breaker()
        .act(outbound_guard::ManualAction::ForceOpen);
    assert!(sber.register(&Order(4)).await.is_err());
}

// docs/adapters.md, "A tower layer inside `Guards`": an adapter over any client service.

mod layered {
    use std::error::Error;

    use outbound_guard::{CircuitBreakerError, Guard, Guarded};
    use outbound_guard_tower::{GuardLayer, GuardService, GuardedError};
    use tower::{Layer, Service, ServiceExt};

    #[derive(Debug)]
    pub enum CustomerError {
        Unavailable(CircuitBreakerError),
        Transport(Box<dyn Error + Send + Sync>),
    }

    /// The customer system behind any `tower::Service` client (hyper's, a generated one),
    /// guarded by the layer over the guard `Guards` holds.
    #[derive(Guarded)]
    #[guarded(system = "customer")]
    pub struct CustomerClient<S> {
        guard: Guard,
        http: GuardService<S>,
        base_url: String,
    }

    impl<S> CustomerClient<S> {
        pub fn new(guard: Guard, client: S) -> Result<Self, Box<dyn Error>> {
            let base_url = guard.settings().base_url().ok_or("no base_url")?.to_owned();
            let http = GuardLayer::new(guard.clone()).layer(client);
            Ok(CustomerClient {
                guard,
                http,
                base_url,
            })
        }
    }

    impl<S> CustomerClient<S>
    where
        S: Service<String, Response = String> + Clone,
        S::Error: Into<Box<dyn Error + Send + Sync>>,
    {
        pub async fn name(&self, id: u64) -> Result<String, CustomerError> {
            let url = format!("{}/customers/{id}", self.base_url);
            self.http.clone().oneshot(url).await.map_err(|e| match e {
                GuardedError::Guard(e) => CustomerError::Unavailable(e),
                GuardedError::Service(e) => CustomerError::Transport(e.into()),
            })
        }
    }
}

#[tokio::test]
async fn the_adapters_page_puts_a_layer_inside_guards() -> Result<(), Box<dyn Error>> {
    use layered::CustomerClient;

    let settings = Settings::parse(
        "[systems.customer]\nbase_url = \"http://127.0.0.1:1\"\n",
        "inline",
    )?;
    let guards = Guards::new(&settings);
    let client =
        tower::service_fn(
            |url: String| async move { Ok::<_, std::io::Error>(format!("{url}: Ada")) },
        );
    let customers = guards.try_adapter(|guard| CustomerClient::new(guard, client))?;
    assert_eq!(
        customers.name(7).await.unwrap(),
        "http://127.0.0.1:1/customers/7: Ada"
    );
    let failing =
        tower::service_fn(|_: String| async { Err::<String, _>(std::io::Error::other("refused")) });
    let broken = guards.try_adapter(|guard| CustomerClient::new(guard, failing))?;
    match broken.name(7).await {
        Err(layered::CustomerError::Transport(e)) => assert_eq!(e.to_string(), "refused"),
        other => panic!("{other:?}"),
    }
    // The layer's guard is the one `Guards` holds: readiness and manual control see it.
    guards.manual("customer", "force_open".parse()?)?;
    match customers.name(7).await {
        Err(layered::CustomerError::Unavailable(e)) => assert_eq!(e.system(), "customer"),
        other => panic!("{other:?}"),
    }
    Ok(())
}

// docs/adapters.md, "A strict hexagon": the domain owns its errors.

/// The domain crate: its port and its own error; no dependency on outbound-guard.
mod domain {
    use std::time::Duration;

    #[derive(Debug, PartialEq)]
    pub enum FiscalError {
        /// Try again after this long.
        Unavailable {
            retry_after: Duration,
        },
        Rejected(String),
    }

    #[allow(async_fn_in_trait)]
    pub trait FiscalPort {
        async fn register(&self, receipt: u64) -> Result<String, FiscalError>;
    }
}

/// The adapters crate: the guard's error becomes the domain's, here.
mod adapters {
    use outbound_guard::{CircuitBreakerError, Guard, Guarded};

    use crate::domain::{FiscalError, FiscalPort};

    fn unavailable(error: CircuitBreakerError) -> FiscalError {
        FiscalError::Unavailable {
            retry_after: error.http_retry_after(),
        }
    }

    #[derive(Guarded)]
    #[guarded(system = "sber")]
    pub struct SberFiscal {
        guard: Guard,
    }

    impl SberFiscal {
        pub fn new(guard: Guard) -> Self {
            SberFiscal { guard }
        }
    }

    #[outbound_guard::adapter(error_map = unavailable)]
    impl FiscalPort for SberFiscal {
        async fn register(&self, receipt: u64) -> Result<String, FiscalError> {
            match receipt {
                0 => Err(FiscalError::Rejected("an empty receipt".to_owned())),
                n => Ok(format!("receipt {n}")),
            }
        }
    }
}

#[tokio::test]
async fn the_adapters_page_keeps_the_domain_free_of_the_guard() -> Result<(), Box<dyn Error>> {
    use domain::{FiscalError, FiscalPort};

    let settings = Settings::parse("[systems.sber]\n", "inline")?;
    let guards = Guards::new(&settings);
    let fiscal = guards.adapter(adapters::SberFiscal::new)?;
    assert_eq!(fiscal.register(1).await, Ok("receipt 1".to_owned()));
    assert!(matches!(
        fiscal.register(0).await,
        Err(FiscalError::Rejected(_))
    ));
    guards.manual("sber", "force_open".parse()?)?;
    assert!(matches!(
        fiscal.register(2).await,
        Err(FiscalError::Unavailable { .. })
    ));
    Ok(())
}

// reqwest/README.md

fn reqwest_client(settings: &Settings) -> Result<reqwest::Client, Box<dyn Error>> {
    let sber = settings.system("sber").expect("compiled against `sber`");
    let client = outbound_guard_reqwest::client_builder(sber).build()?;
    Ok(client)
}

#[test]
fn the_reqwest_readme_builds_the_systems_client() {
    let settings = Settings::parse("[systems.sber]\n", "inline").unwrap();
    reqwest_client(&settings).unwrap();
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

// The check: every Rust block of the docs and of the crates' READMEs is compiled, here or
// where the table says. (README.md's "Use it" is examples/use-it, checked there;
// docs/testing.md is examples/testing, checked there; settings/README.md is a doctest of
// its crate.)

/// Each page, and the files (from the workspace root) whose lines show its Rust blocks.
const COMPILED: [(&str, &[&str]); 10] = [
    (
        "docs/adapters.md",
        &["examples/payments-demo/tests/docs.rs"],
    ),
    (
        "docs/operations.md",
        &["examples/payments-demo/tests/docs.rs"],
    ),
    ("docs/settings.md", &["examples/payments-demo/build.rs"]),
    // The recorder crate's doctest, lines after `//! `.
    ("docs/recording.md", &["recorder/src/lib.rs"]),
    ("recorder/README.md", &["recorder/src/lib.rs"]),
    (
        "runtime/README.md",
        &["examples/payments-demo/tests/docs.rs"],
    ),
    (
        "reqwest/README.md",
        &["examples/payments-demo/tests/docs.rs"],
    ),
    // A doctest of the module's documentation, lines after `//! `.
    ("tower/README.md", &["tower/src/hyper_client.rs"]),
    ("tonic/README.md", &["examples/grpc-echo/src/main.rs"]),
    (
        "examples/grpc-echo/README.md",
        &["examples/grpc-echo/src/main.rs"],
    ),
];

/// A source's text, its `//! ` documentation lines as the doctest compiles them.
fn compiled(path: &Path) -> String {
    read(path)
        .lines()
        .map(|line| line.strip_prefix("//! ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_rust_block_of_the_docs_and_readmes_is_compiled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (page, sources) in COMPILED {
        let sources: Vec<String> = sources.iter().map(|s| compiled(&root.join(s))).collect();
        for block in blocks(&read(&root.join(page)), "rust") {
            assert!(
                sources.iter().any(|source| shown_in(&block, source)),
                "a Rust block of {page} that none of its compiled files holds:\n{block}"
            );
        }
    }
    // Every page of docs/ is covered, here or by its own example crate (`examples/testing`,
    // `examples/generated`, `examples/replay-check`); its folders hold the pages' other
    // files (converters).
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        let covered = COMPILED.iter().any(|(page, _)| *page == name)
            || [
                "docs/testing.md",
                "docs/generated-clients.md",
                "docs/replay.md",
            ]
            .contains(&name.as_str());
        let rust = blocks(&read(&root.join(&name)), "rust");
        assert!(
            covered || rust.is_empty(),
            "{name} has Rust blocks no test compiles"
        );
    }
}
