//! Every system's guard, built once at startup from the settings.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use outbound_guard_settings::Settings;

use crate::action::ManualAction;
use crate::error::UnknownSystem;
use crate::guard::Guard;
use crate::health::{Health, ReadinessPolicy, SystemHealth};
use crate::metrics::{self, GuardMetrics};
use crate::observer::Observer;
use crate::wiring::{self, SystemAdapter, WiringError};

/// One [`Guard`] per configured system, built once at startup.
///
/// [`Guards::new`] logs every breaker transition (feature `tracing`, on by default; see
/// `TracingObserver`) and, with the feature `metrics`,
/// registers every system's metrics at once (see the `metrics` module).
/// [`Guards::builder`] adds observers, turns either off, or sets the
/// [`ReadinessPolicy`] of [`Guards::health`]. Operators act on a breaker by system name
/// with [`Guards::manual`].
///
/// ```
/// use outbound_guard::{Guards, Settings};
///
/// let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
/// let guards = Guards::new(&settings);
/// let sber = guards.get("sber").unwrap();
/// assert_eq!(sber.system(), "sber");
/// let err = guards.get("sbr").unwrap_err();
/// assert_eq!(err.to_string(), "no system `sbr` in inline; did you mean `sber`? known systems: `customer`, `sber`");
/// ```
#[derive(Debug, Clone)]
pub struct Guards {
    origin: String,
    by_name: BTreeMap<String, Guard>,
    readiness: ReadinessPolicy,
    /// Serialises reloads (shared by the clones, as the guards are).
    reload: Arc<Mutex<()>>,
    /// Whether metrics are recorded (a reload's count too).
    metrics: bool,
}

impl Guards {
    /// A guard for every system in `settings`, with the default observability: transitions
    /// logged (feature `tracing`), metrics registered (feature `metrics`).
    pub fn new(settings: &Settings) -> Self {
        Self::builder(settings).build()
    }

    /// Guards with chosen observers (each [`observer`](GuardsBuilder::observer) hears
    /// every system as well as the default observability of [`Guards::new`]), logging,
    /// metrics and readiness policy: the one way to build guards other than `new`.
    ///
    /// ```
    /// use outbound_guard::{Guards, ReadinessPolicy, Settings};
    ///
    /// let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    /// let guards = Guards::builder(&settings)
    ///     .readiness(ReadinessPolicy::FailOnOpen)
    ///     .build();
    /// guards.manual("sber", "force_open".parse().unwrap()).unwrap();
    /// assert!(!guards.health().ready);
    /// ```
    pub fn builder(settings: &Settings) -> GuardsBuilder<'_> {
        GuardsBuilder {
            settings,
            observers: Vec::new(),
            #[cfg(feature = "tracing")]
            tracing: true,
            metrics: crate::metrics::ON_BY_DEFAULT,
            readiness: ReadinessPolicy::default(),
        }
    }

    /// The guard of `system`; an error naming the known systems if there is none.
    ///
    /// # Errors
    ///
    /// [`UnknownSystem`] when the settings have no table for `system`.
    pub fn get(&self, system: &str) -> Result<Guard, UnknownSystem> {
        self.find(system).cloned()
    }

    /// Builds an adapter with the guard of its own system (known at compile time, see
    /// [`SystemAdapter`](crate::SystemAdapter)) and checks that the adapter holds it:
    /// a wrong wiring is an error here, where the adapter is built, not a surprise on
    /// its first call.
    ///
    /// ```
    /// use outbound_guard::{Guard, Guarded, Guards, Settings, SystemAdapter};
    ///
    /// #[derive(Guarded)]
    /// struct SberAdapter {
    ///     guard: Guard,
    /// }
    ///
    /// // What `#[guarded(system = "sber")]` on the derive writes.
    /// impl SystemAdapter for SberAdapter {
    ///     const SYSTEM: &'static str = "sber";
    /// }
    ///
    /// let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
    /// let guards = Guards::new(&settings);
    /// let sber = guards.adapter(|guard| SberAdapter { guard }).unwrap();
    /// assert_eq!(sber.guard().system(), "sber");
    /// // A builder that picks another guard itself is caught too.
    /// let customer = guards.get("customer").unwrap();
    /// let err = guards.adapter(|_| SberAdapter { guard: customer }).err().unwrap();
    /// assert!(err.to_string().contains("built with the `customer` guard"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`WiringError::UnknownSystem`](crate::WiringError::UnknownSystem) when the settings
    /// have no table for `A::SYSTEM`, [`WiringError::WrongGuard`](crate::WiringError::WrongGuard)
    /// when `build` used another system's guard.
    pub fn adapter<A, F>(&self, build: F) -> Result<A, WiringError>
    where
        A: SystemAdapter,
        F: FnOnce(Guard) -> A,
    {
        let adapter = build(self.get(A::SYSTEM)?);
        wiring::check::<A>(adapter.guard())?;
        Ok(adapter)
    }

    /// [`adapter`](Self::adapter) for a fallible constructor, such as a `new` that also
    /// builds the adapter's HTTP client: `build`'s error and the wiring's both come back
    /// as `E`, so `?` works in a `main` returning `Box<dyn Error>`.
    ///
    /// ```
    /// use outbound_guard::{Guard, Guarded, Guards, Settings, SystemAdapter};
    ///
    /// #[derive(Guarded)]
    /// struct SberAdapter {
    ///     guard: Guard,
    ///     base_url: String,
    /// }
    ///
    /// // What `#[guarded(system = "sber")]` on the derive writes.
    /// impl SystemAdapter for SberAdapter {
    ///     const SYSTEM: &'static str = "sber";
    /// }
    ///
    /// impl SberAdapter {
    ///     fn new(guard: Guard) -> Result<Self, Box<dyn std::error::Error>> {
    ///         let base_url = guard.settings().base_url().ok_or("sber has no base_url")?.to_owned();
    ///         Ok(SberAdapter { guard, base_url })
    ///     }
    /// }
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let settings = Settings::parse("[systems.sber]\nbase_url = \"http://127.0.0.1:8081\"", "inline")?;
    /// let guards = Guards::new(&settings);
    /// let sber = guards.try_adapter(SberAdapter::new)?;
    /// assert_eq!(sber.base_url, "http://127.0.0.1:8081");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `build`'s own error, or a [`WiringError`](crate::WiringError) converted into `E`
    /// (see [`adapter`](Self::adapter)).
    pub fn try_adapter<A, E, F>(&self, build: F) -> Result<A, E>
    where
        A: SystemAdapter,
        E: From<WiringError>,
        F: FnOnce(Guard) -> Result<A, E>,
    {
        let guard = self.get(A::SYSTEM).map_err(WiringError::from)?;
        let adapter = build(guard)?;
        wiring::check::<A>(adapter.guard()).map_err(WiringError::from)?;
        Ok(adapter)
    }

    fn find(&self, system: &str) -> Result<&Guard, UnknownSystem> {
        self.by_name.get(system).ok_or_else(|| {
            let names = self.by_name.keys().map(String::as_str);
            let hint = outbound_guard_settings::__private::did_you_mean(system, names);
            UnknownSystem {
                system: system.to_owned(),
                origin: self.origin.clone(),
                hint,
                known: outbound_guard_settings::__private::quoted_list(
                    self.by_name.keys().map(String::as_str),
                ),
            }
        })
    }

    /// Every guard, in system-name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Guard> {
        self.by_name.values()
    }

    /// Every system's health and the readiness verdict under this set's
    /// [`ReadinessPolicy`]: serialized (feature `serde`), the body of a
    /// `/health/ready` answer; its status is [`Health::http_status`].
    pub fn health(&self) -> Health {
        Health::new(
            self.by_name.values().map(Guard::health).collect(),
            self.readiness,
        )
    }

    /// Performs every due open → half-open transition, so that what is read next — the
    /// `resilience_state` gauge above all — shows the truth for an idle system too.
    /// Calls and readings ([`Guards::health`], [`Breaker::state`](crate::Breaker::state))
    /// do this on their own; a `/metrics` handler that only renders the exporter's
    /// gauges calls this first. No background task is involved.
    pub fn refresh(&self) {
        for guard in self.by_name.values() {
            guard.breaker().state();
        }
    }

    /// The policy [`Guards::health`] judges readiness by.
    pub fn readiness(&self) -> ReadinessPolicy {
        self.readiness
    }

    /// An operator's action on `system`'s breaker: force it open (every call rejected),
    /// disable it (forced closed: every call admitted, nothing counted), reset it
    /// (closed, empty window), or turn observe mode on or off (`observe`: it keeps
    /// judging and moving through its states but refuses no call, except while forced
    /// open; `enforce`: it refuses by the state it is in). Each stays until the next
    /// action, or a reload that changes `cb_mode`. A change of state is reported to the
    /// observers as a transition with reason `manual` — logged and counted — unless the
    /// breaker is already in the state asked for: then it is a no-op that changes, logs
    /// and counts nothing ([`Breaker::act`](crate::Breaker::act) says which). Returns the
    /// system's health after it.
    ///
    /// `ManualAction` parses from `force_open`, `disable`, `reset`, `observe` and
    /// `enforce` (and `cb_mode`'s own words), for an admin endpoint such as
    /// `POST /admin/breakers/{system}/{action}`.
    ///
    /// # Errors
    ///
    /// [`UnknownSystem`] when the settings have no table for `system`.
    pub fn manual(
        &self,
        system: &str,
        action: ManualAction,
    ) -> Result<SystemHealth, UnknownSystem> {
        let guard = self.find(system)?;
        guard.breaker().act(action);
        Ok(guard.health())
    }
}

/// Builds [`Guards`]; from [`Guards::builder`].
#[must_use = "nothing is built until `build`"]
pub struct GuardsBuilder<'s> {
    settings: &'s Settings,
    observers: Vec<Arc<dyn Observer>>,
    #[cfg(feature = "tracing")]
    tracing: bool,
    metrics: bool,
    readiness: ReadinessPolicy,
}

impl std::fmt::Debug for GuardsBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("GuardsBuilder");
        d.field("origin", &self.settings.origin())
            .field("observers", &self.observers.len());
        #[cfg(feature = "tracing")]
        d.field("tracing", &self.tracing);
        d.field("metrics", &self.metrics);
        d.field("readiness", &self.readiness).finish()
    }
}

impl GuardsBuilder<'_> {
    /// Adds an observer of every system's transitions and calls.
    pub fn observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Whether transitions are logged by a [`TracingObserver`](crate::TracingObserver);
    /// on by default.
    #[cfg(feature = "tracing")]
    pub fn tracing(mut self, on: bool) -> Self {
        self.tracing = on;
        self
    }

    /// Whether every system's metrics are registered with the current `metrics`
    /// recorder and recorded; on by default with the feature `metrics`. Install the
    /// recorder before [`build`](Self::build): handles taken before it was installed
    /// record nothing. Without the feature there is nothing to record, and this changes
    /// nothing (it exists either way, so that a builder compiles under both).
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// How an open breaker counts towards readiness in [`Guards::health`]; by default
    /// it degrades readiness without failing it.
    pub fn readiness(mut self, policy: ReadinessPolicy) -> Self {
        self.readiness = policy;
        self
    }

    /// A guard for every configured system.
    pub fn build(self) -> Guards {
        #[cfg_attr(not(feature = "tracing"), allow(unused_mut))]
        let mut observers = self.observers;
        #[cfg(feature = "tracing")]
        if self.tracing {
            observers.push(Arc::new(crate::tracing_observer::TracingObserver));
        }
        if self.metrics {
            metrics::describe();
        }
        #[cfg(feature = "tracing")]
        if self.tracing {
            settings_in_effect(self.settings);
        }
        let by_name = self
            .settings
            .systems()
            .map(|system| {
                let mut observers = observers.clone();
                let metrics = if self.metrics {
                    GuardMetrics::register(system)
                } else {
                    GuardMetrics::none()
                };
                observers.extend(metrics.observer());
                (
                    system.name().to_owned(),
                    Guard::build(system, observers, metrics),
                )
            })
            .collect();
        Guards {
            origin: self.settings.origin().to_owned(),
            by_name,
            readiness: self.readiness,
            reload: Arc::new(Mutex::new(())),
            metrics: self.metrics,
        }
    }
}

impl Guards {
    /// Held while a reload runs.
    pub(crate) fn reload_lock(&self) -> MutexGuard<'_, ()> {
        self.reload.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn metrics_on(&self) -> bool {
        self.metrics
    }
}

/// The one startup line saying which file is in effect:
/// `outbound-guard settings from /etc/payments/resilience.toml: sber, customer`.
#[cfg(feature = "tracing")]
pub(crate) fn settings_in_effect(settings: &Settings) {
    let systems: Vec<&str> = settings.names().collect();
    tracing::info!(
        target: "outbound_guard",
        origin = settings.origin(),
        "outbound-guard settings from {}: {}",
        settings.origin(),
        systems.join(", ")
    );
}
