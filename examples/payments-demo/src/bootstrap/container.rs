//! Builds everything once at startup: settings → guards → adapters → use cases → the
//! HTTP router. Each adapter gets its own system's guard, so the breakers, bulkheads and
//! HTTP clients of `sber` and `customer` never mix (R-RES-ISO-1/3).

use std::sync::{Arc, OnceLock};

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use outbound_guard::{Guards, Observer, Settings, SettingsError, UnknownSystem};

use crate::adapters::http::{self, AppState};
use crate::adapters::out::customer::CustomerAdapter;
use crate::adapters::out::memory::InMemoryOrders;
use crate::adapters::out::sber::SberAdapter;
use crate::adapters::out::BuildError;
use crate::core::orders::Orders;

/// The service's settings: `examples/payments-demo/resilience.toml` (compiled in, the same file
/// `#[circuit_breaker]` checks) with the process environment's `CLIENT_<SYSTEM>__<KEY>`
/// overrides applied.
///
/// # Errors
///
/// If the file or an override is invalid.
pub fn load_settings() -> Result<Settings, SettingsError> {
    outbound_guard::settings!()
}

/// Like [`load_settings`], with the environment given as name/value pairs (tests).
///
/// # Errors
///
/// If the file or one of `vars` is invalid.
pub fn load_settings_with<I, K, V>(vars: I) -> Result<Settings, SettingsError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    outbound_guard::settings!(env = vars)
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The settings are invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A system the service needs has no table in resilience.toml.
    #[error(transparent)]
    UnknownSystem(#[from] UnknownSystem),
    /// An adapter could not be built.
    #[error(transparent)]
    Adapter(#[from] BuildError),
    /// The mounted settings file cannot be watched for changes.
    #[error(transparent)]
    Watch(#[from] outbound_guard::WatchError),
}

/// Everything built at startup.
pub struct Container {
    /// One guard per system.
    pub guards: Guards,
    /// The Sber adapter (the payment port).
    pub sber: Arc<SberAdapter>,
    /// The customer adapter (the customer port).
    pub customers: Arc<CustomerAdapter>,
    /// The order use cases, over the Sber adapter.
    pub orders: Orders<SberAdapter>,
    /// The Prometheus exporter's handle, rendering `/metrics`.
    pub metrics: Option<PrometheusHandle>,
    /// The bearer token the operator's control actions need: [`ADMIN_TOKEN_VAR`] from
    /// the environment; with none, the controls are refused.
    pub admin_token: Option<String>,
    /// The settings file in effect: the mounted one (`RESILIENCE_SETTINGS`), or the
    /// compiled-in one's source.
    pub settings_origin: String,
    /// The mounted settings file's watcher: it reloads the file while the service
    /// serves (none for the compiled-in file).
    pub watcher: Option<Arc<outbound_guard::SettingsWatcher>>,
}

/// The environment variable holding the operator's token: `DEMO_ADMIN_TOKEN`.
pub const ADMIN_TOKEN_VAR: &str = "DEMO_ADMIN_TOKEN";

/// The operator's token from [`ADMIN_TOKEN_VAR`]; unset or empty is none.
pub fn admin_token_from_env() -> Option<String> {
    std::env::var(ADMIN_TOKEN_VAR)
        .ok()
        .filter(|t| !t.trim().is_empty())
}

impl Container {
    /// Builds the guards (each reporting to `observers`, to `tracing` and to the
    /// Prometheus recorder) and the adapters over them.
    ///
    /// # Errors
    ///
    /// If `settings` lack `sber` or `customer`, an adapter cannot be built, or the
    /// settings file named by the environment cannot be watched.
    pub fn build(
        settings: &Settings,
        observers: Vec<Arc<dyn Observer>>,
    ) -> Result<Self, StartupError> {
        // The recorder first: the guards register every system's series with it.
        let metrics = prometheus(settings);
        let guards = observers
            .into_iter()
            .fold(Guards::builder(settings), |builder, observer| {
                builder.observer(observer)
            })
            .build();
        let sber = Arc::new(SberAdapter::new(guards.get("sber")?)?);
        let customers = Arc::new(CustomerAdapter::new(guards.get("customer")?)?);
        let orders = Orders::new(Arc::clone(&sber), Arc::new(InMemoryOrders::default()));
        // A mounted file is reloaded when it changes (a ConfigMap edit).
        let watcher = match std::env::var_os(outbound_guard::settings::PATH_VARIABLE) {
            Some(path) if !path.is_empty() => Some(Arc::new(guards.watch(path)?)),
            _ => None,
        };
        Ok(Container {
            guards,
            sber,
            customers,
            orders,
            metrics,
            admin_token: admin_token_from_env(),
            settings_origin: settings.origin().to_owned(),
            watcher,
        })
    }

    /// The same, with `token` as the operator's token instead of the environment's.
    #[must_use]
    pub fn with_admin_token(mut self, token: Option<String>) -> Self {
        self.admin_token = token.filter(|t| !t.trim().is_empty());
        self
    }

    /// The public HTTP API over these adapters.
    pub fn router(&self) -> axum::Router {
        http::router(self.state())
    }

    /// The operator's routes (`/admin/breakers/…`, `/metrics`): serve them on the
    /// admin listener, never on the public one. The control actions need
    /// [`admin_token`](Self::admin_token); the metrics do not.
    pub fn admin_router(&self) -> axum::Router {
        http::admin_router(self.state())
    }

    fn state(&self) -> AppState<SberAdapter, CustomerAdapter> {
        AppState {
            orders: self.orders.clone(),
            customers: Arc::clone(&self.customers),
            guards: self.guards.clone(),
            metrics: self.metrics.clone(),
            admin_token: self.admin_token.as_deref().map(Arc::from),
        }
    }
}

/// The process-wide Prometheus recorder, installed on first use (a process has one
/// global `metrics` recorder; tests build many containers in one process). The call
/// durations are a histogram whose buckets cover every system's `total_timeout`.
fn prometheus(settings: &Settings) -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let buckets = outbound_guard::metrics::duration_buckets(settings);
            PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full(outbound_guard::metrics::CALL_DURATION_SECONDS.into()),
                    &buckets,
                )
                .ok()?
                .install_recorder()
                .ok()
        })
        .clone()
}
