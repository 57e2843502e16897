//! Circuit breaker, bulkhead and timeouts for the out-adapters of async services, as
//! the Resilience Style Guide writes them, from one attribute on the adapter's public
//! async method, as the guide's design card writes it ([`circuit_breaker`]):
//!
//! ```ignore
//! use outbound_guard::circuit_breaker;
//!
//! impl PaymentPort for SberAdapter {
//!     #[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
//!     async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
//!         self.post_payment(order).await // the HTTP call, with `?` and `return` as usual
//!     }
//! }
//! ```
//!
//! (The runtime's README shows this block, compiled by the workspace's tests.)
//! [`adapter`] on the impl block, `#[adapter(system = "sber", error_map = …)]`, says it
//! once for every method of the block.
//!
//! Each system has a table in the service's `resilience.toml` ([`Settings`]), one
//! [`Guard`] built from it at startup ([`Guards`]), and adapters that hold their
//! system's guard (`#[derive(Guarded)]`) and know their system at compile time
//! ([`SystemAdapter`], so [`Guards::adapter`] refuses a wrong guard where the adapter
//! is built). Code without the attribute calls [`Guard::call_judged`] with
//! [`CallOptions`]; tests build errors with [`CircuitBreakerError::from_cause`]. What a
//! guarded call does, step by step: [`GuardedCall`].
//!
//! Observability: every breaker transition is logged in words
//! (`TracingObserver`, feature `tracing`, on by default) and every admitted call runs in
//! a `guarded_call{system, outcome}` span; the `metrics` module (feature `metrics`) exports
//! Prometheus-style series for every configured system from startup on;
//! [`Guards::health`] is a readiness snapshot; [`Guards::manual`] lets an operator force
//! a breaker open, disable it or reset it.
//!
//! Features: `tracing` (default) logs and spans through `tracing`; `metrics` records
//! through the `metrics` facade; `test-support` puts a guard into a given state in users'
//! tests (the `testing` module); `watch` reloads the mounted settings file when it
//! changes (`Guards::watch`); `serde` serialises the readiness snapshot. A recording of
//! every guarded call for `outbound-guard replay` is an observer in a crate of its own,
//! `outbound-guard-recorder`.
//!
//! Clients, each in a crate of its own beside this one: `outbound-guard-reqwest` builds
//! each system's reqwest client from its settings and classifies reqwest's errors;
//! `outbound-guard-tower` guards any `tower::Service` (a tower `Layer`), classifies HTTP
//! answers and builds hyper's client; `outbound-guard-tonic` guards tonic clients (the
//! gRPC layer) and builds each system's tonic `Endpoint`. Which statuses count is
//! [`http_status`], shared by the HTTP ones.
//!
//! Which settings are enforced where: the guard enforces `total_timeout`, every `cb_*`
//! key and the bulkhead (`max_connections × 0.8` permits, `bulkhead_wait`); the client
//! enforces the rest when it is built from them, each kind of client its share (the
//! table in [`settings`](mod@settings)).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod action;
mod breaker;
mod bulkhead;
mod call;
mod error;
mod guard;
mod health;
mod hooks;
pub mod http_status;
// The metrics are compiled for the unit tests too, so that theirs run without the
// feature. Otherwise a stub with the same crate-internal API and nothing to record: the
// one place the feature is looked at.
#[cfg(any(feature = "metrics", test))]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
#[cfg(not(any(feature = "metrics", test)))]
#[path = "metrics/off.rs"]
mod metrics;
mod observer;
mod registry;
mod reload;
mod saturation;
mod state;
mod sync;
#[cfg(feature = "test-support")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
pub mod testing;
#[cfg(feature = "tracing")]
mod tracing_observer;
mod verdict;
#[cfg(feature = "watch")]
#[cfg_attr(docsrs, doc(cfg(feature = "watch")))]
mod watch;
mod wiring;

#[doc(hidden)]
pub mod __private;

pub use action::{ManualAction, UnknownAction};
pub use breaker::{Breaker, BreakerPermit, SetBy, Snapshot, Trials};
pub use call::{CallOptions, GuardedCall, Judge, RunningCall};
pub use error::{Cause, CircuitBreakerError, UnknownSystem};
pub use guard::{Guard, GuardBuilder};
pub use health::{Health, HealthStatus, ReadinessPolicy, SystemHealth};
pub use observer::{CallEvent, Observer, OpenPeriod, Outcome, Transition};
#[doc(inline)]
pub use outbound_guard_macros::{adapter, circuit_breaker, unguarded, Guarded};
pub use outbound_guard_settings::{Settings, SettingsError, SystemSettings};
pub use registry::{Guards, GuardsBuilder};
pub use reload::{ReloadError, Reloaded};
pub use state::{Reason, State};
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use tracing_observer::TracingObserver;
pub use verdict::Verdict;
#[cfg(feature = "watch")]
#[cfg_attr(docsrs, doc(cfg(feature = "watch")))]
pub use watch::{SettingsWatcher, WatchError};
pub use wiring::{Guarded, SystemAdapter, WiringError, WrongGuard};

/// The settings crate, whole (`outbound-guard-settings`: keys, the loader, environment
/// variable names, the build-script helper), so a service needs no second dependency for
/// them. [`Settings`], [`SystemSettings`] and [`SettingsError`] are at the crate root too.
///
#[doc = include_str!("../doc/clients.md")]
pub mod settings {
    pub use outbound_guard_settings::*;
}

/// Loads the service's settings: the file the environment variable
/// [`RESILIENCE_SETTINGS`](settings::PATH_VARIABLE) names when it is set (a file mounted at
/// run time, such as a Kubernetes `ConfigMap`), otherwise the calling crate's settings
/// file compiled in (the same file `#[adapter]` checks, found by the same rule —
/// the file named by `[package.metadata.outbound-guard] settings = "…"` in the crate's
/// `Cargo.toml`, alone, if it names one; otherwise `resilience.toml` next to the crate's
/// `Cargo.toml`, then the workspace root's). Either way it applies the process
/// environment's `CLIENT_…__…` overrides and validates the result. Evaluates to
/// `Result<Settings, SettingsError>`; [`Settings::origin`] says which file is in effect.
///
/// The settings must hold every system this binary calls: each system of the compiled-in
/// file, and each system named in any crate linked into the binary, collected at link
/// time: by `#[derive(Guarded)] #[guarded(system = …)]`, by an
/// `#[adapter(system = …)]` block, by a `#[circuit_breaker(system = …)]` method, or by
/// [`calls!`]. A mounted file that cannot be read is an
/// error naming its path and the variable; one without a table for such a system is an
/// error naming the system.
///
/// `settings!(env = vars)` takes the environment from an iterator of name/value pairs
/// instead (`RESILIENCE_SETTINGS` included), for tests.
#[macro_export]
macro_rules! settings {
    () => {{
        let (text, origin): (&str, &str) = $crate::__private::settings_file!();
        $crate::__private::load_settings($crate::settings::Loader::new(), text, origin)
    }};
    (env = $vars:expr) => {{
        let (text, origin): (&str, &str) = $crate::__private::settings_file!();
        $crate::__private::load_settings($crate::settings::Loader::new().env($vars), text, origin)
    }};
}

/// Declares systems this binary calls without an attribute naming them, such as a
/// system reached only through [`Guards::get`] by name (the tower layer): a settings
/// file mounted at run time must then hold them too (see [`settings!`]). An item:
/// write it once anywhere in any crate of the binary.
///
/// ```
/// outbound_guard::calls!("sber", "customer");
/// ```
#[macro_export]
macro_rules! calls {
    ($($system:literal),+ $(,)?) => {
        $(
            const _: () = {
                #[$crate::__private::linkme::distributed_slice($crate::__private::CALLED_SYSTEMS)]
                #[linkme(crate = $crate::__private::linkme)]
                static __CB_CALLS: $crate::__private::Called = $crate::__private::Called {
                    system: $system,
                    by: "`outbound_guard::calls!`",
                };
            };
        )+
    };
}
