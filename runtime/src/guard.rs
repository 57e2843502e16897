//! The guard: one per system, holding that system's settings, bulkhead and breaker
//! (R-RES-ISO-1/3). Cloning it is cheap and shares all three.

use std::future::Future;
use std::sync::Arc;

use crate::breaker::Breaker;
use crate::bulkhead::Bulkhead;
use crate::call::{report_rejection, BulkheadPermit};
use crate::error::{Cause, CircuitBreakerError};
use crate::guarded::GuardedCall;
use crate::health::SystemHealth;
#[cfg(any(feature = "metrics", test))]
use crate::metrics::SystemMetrics;
use crate::observer::Observer;
use crate::options::CallOptions;
use crate::saturation::{Episode, SlowHolders};
use outbound_guard_settings::SystemSettings;

/// One system's bulkhead, breaker and timeouts.
///
/// Adapters keep their system's guard in a field and `#[derive(Guarded)]`; the
/// `#[circuit_breaker]` attribute then runs each call through the guard's steps, in the
/// guide's order, with [`call_with`](Guard::call_with): [`enter_bulkhead`](Guard::enter_bulkhead) →
/// [`ask_breaker`](crate::BulkheadPermit::ask_breaker) → [`timeout`](crate::CallPermit::timeout)
/// → [`elapsed_check`](crate::Finished::elapsed_check). Each step is public too, for
/// code that wants to hold a permit itself.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use outbound_guard::{Guard, Settings};
///
/// let settings = Settings::parse("[systems.sber]", "inline").unwrap();
/// let guard = Guard::new(settings.system("sber").unwrap());
/// let answer = guard.call(async { Ok::<_, std::io::Error>(42) }).await;
/// assert_eq!(answer.unwrap().unwrap(), 42);
/// assert_eq!(guard.bulkhead_permits(), 8); // max_connections 10 × 0.8
/// # }
/// ```
#[derive(Clone)]
pub struct Guard {
    inner: Arc<Inner>,
}

struct Inner {
    settings: SystemSettings,
    breaker: Breaker,
    bulkhead: Bulkhead,
    /// Bulkhead permits held by calls already counted slow.
    slow: SlowHolders,
    #[cfg(any(feature = "metrics", test))]
    metrics: Option<Arc<SystemMetrics>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("system", &self.system())
            .field("state", &self.inner.breaker.state())
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// A guard for one system, with no observers.
    pub fn new(settings: &SystemSettings) -> Self {
        Self::with_observers(settings, Vec::new())
    }

    /// A guard whose breaker and calls report to `observers`.
    pub fn with_observers(settings: &SystemSettings, observers: Vec<Arc<dyn Observer>>) -> Self {
        Self::build(
            settings,
            observers,
            #[cfg(any(feature = "metrics", test))]
            None,
        )
    }

    /// A guard reporting to `observers` and, if given, recording `metrics` (which must
    /// be among the observers too, to see the breaker's transitions).
    pub(crate) fn build(
        settings: &SystemSettings,
        observers: Vec<Arc<dyn Observer>>,
        #[cfg(any(feature = "metrics", test))] metrics: Option<Arc<SystemMetrics>>,
    ) -> Self {
        let permits = settings.bulkhead_permits();
        debug_assert!(permits >= 1, "the settings guarantee at least one permit");
        Guard {
            inner: Arc::new(Inner {
                settings: settings.clone(),
                breaker: Breaker::with_observers(settings, observers),
                bulkhead: Bulkhead::new(permits),
                slow: SlowHolders::default(),
                #[cfg(any(feature = "metrics", test))]
                metrics,
            }),
        }
    }

    #[cfg(any(feature = "metrics", test))]
    #[inline]
    pub(crate) fn metrics(&self) -> Option<&SystemMetrics> {
        self.inner.metrics.as_deref()
    }

    /// The system's name: `sber`.
    #[inline]
    pub fn system(&self) -> &str {
        self.inner.settings.name()
    }

    /// The system's settings, environment overrides applied.
    #[inline]
    pub fn settings(&self) -> &SystemSettings {
        &self.inner.settings
    }

    /// The system's breaker.
    #[inline]
    pub fn breaker(&self) -> &Breaker {
        &self.inner.breaker
    }

    /// The bulkhead's size: `max_connections × 0.8`, at least 1.
    pub fn bulkhead_permits(&self) -> usize {
        self.inner.bulkhead.permits()
    }

    /// Bulkhead permits taken right now.
    pub fn in_flight(&self) -> usize {
        self.inner.bulkhead.in_use()
    }

    /// Bulkhead permits held right now by calls already past `cb_slow_threshold`.
    /// When it equals [`bulkhead_permits`](Self::bulkhead_permits), the system is
    /// hanging, not busy: see [`enter_bulkhead`](Self::enter_bulkhead).
    pub fn slow_in_flight(&self) -> usize {
        self.inner.slow.held()
    }

    #[inline]
    pub(crate) fn bulkhead_ref(&self) -> &Bulkhead {
        &self.inner.bulkhead
    }

    #[inline]
    pub(crate) fn slow_holders(&self) -> &SlowHolders {
        &self.inner.slow
    }

    /// The system's breaker and bulkhead, read now: for a health endpoint.
    pub fn health(&self) -> SystemHealth {
        SystemHealth::of(self)
    }

    /// Step 1: a bulkhead permit (R-RES-BH-1), waiting at most `bulkhead_wait`.
    ///
    /// When the bulkhead is full, an open breaker (not yet due for trials) or a forced
    /// open one turns the caller away at once, before it waits: the guide's breaker
    /// fails calls "immediately, without waiting". The guide's order stays for admitted
    /// calls: a trial slot is only taken in [`ask_breaker`](crate::BulkheadPermit::ask_breaker),
    /// once a permit is held.
    ///
    /// A full bulkhead is load, not the system's failure, and the breaker does not count
    /// it — unless the system is hanging: a caller that began waiting while a permit was
    /// held by a call already past `cb_slow_threshold`, and is turned away with every
    /// permit so held (no slow call having ended meanwhile), counts as one failure, while
    /// the breaker is closed and still in the state the wait began in (half-open, the
    /// trials alone decide).
    ///
    /// # Errors
    ///
    /// [`Cause::BulkheadFull`] when no permit came within `bulkhead_wait`;
    /// [`Cause::Open`] or [`Cause::ForcedOpen`] when the bulkhead is full and the breaker
    /// refuses calls anyway.
    #[inline]
    pub async fn enter_bulkhead(&self) -> Result<BulkheadPermit<'_>, CircuitBreakerError> {
        match self.try_bulkhead() {
            Some(permit) => Ok(permit),
            None => self.wait_for_bulkhead().await,
        }
    }

    /// A bulkhead permit if one is free now: the uncontended path, one compare-and-swap.
    #[inline]
    pub(crate) fn try_bulkhead(&self) -> Option<BulkheadPermit<'_>> {
        if self.inner.bulkhead.try_acquire() {
            Some(BulkheadPermit::new(self))
        } else {
            None
        }
    }

    /// The bulkhead was full: waits at most `bulkhead_wait` for a permit, or rejects.
    #[cold]
    pub(crate) async fn wait_for_bulkhead(
        &self,
    ) -> Result<BulkheadPermit<'_>, CircuitBreakerError> {
        let breaker = self.breaker();
        if let Some(error) = breaker.refusal() {
            report_rejection(self, error.cause());
            return Err(error);
        }
        let generation = breaker.closed_generation();
        let episode = self.inner.slow.slow_held();
        let wait = self.inner.settings.bulkhead_wait();
        if !wait.is_zero() && self.inner.bulkhead.acquire(wait).await {
            return Ok(BulkheadPermit::new(self));
        }
        if let (Some(generation), Some(episode)) = (generation, episode) {
            self.kept_out(generation, episode);
        }
        let cause = Cause::BulkheadFull {
            permits: self.bulkhead_permits(),
            waited: wait,
        };
        report_rejection(self, &cause);
        Err(CircuitBreakerError::new(self.breaker().name_arc(), cause))
    }

    /// A caller's wait that began while closed in `generation`, with some permit held by
    /// a slow call in `episode`, ended without a permit: a failure for the breaker if the
    /// breaker is still closed in `generation` and every permit is now held by a slow call
    /// of `episode` (see `saturation`).
    #[cold]
    fn kept_out(&self, generation: u64, episode: Episode) {
        let breaker = self.breaker();
        if breaker.closed_generation() != Some(generation)
            || !self
                .inner
                .slow
                .saturated_since(self.bulkhead_permits(), episode)
        {
            return;
        }
        breaker.record_closed_failure(generation);
        #[cfg(any(feature = "metrics", test))]
        if let Some(metrics) = self.metrics() {
            metrics.recorded(breaker.failure_rate());
        }
    }

    /// Every step in one call, for code that does not use the attribute: the outer
    /// `Err` is the guard's, the inner `Result` the call's own. Every `Err` of the call
    /// counts as a failure; a slow call's value is returned. [`call_with`](Self::call_with)
    /// takes the attribute's options.
    ///
    /// The returned future does nothing until polled; see [`GuardedCall`] for what
    /// dropping it early gives back.
    ///
    /// # Errors
    ///
    /// The future's output is the guard's refusals: those of
    /// [`enter_bulkhead`](Self::enter_bulkhead),
    /// [`ask_breaker`](crate::BulkheadPermit::ask_breaker) and
    /// [`elapsed_check`](crate::Finished::elapsed_check). The call's own error is the
    /// inner `Err`.
    #[inline]
    pub fn call<T, E, F>(&self, future: F) -> GuardedCall<'_, F, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        self.call_with(CallOptions::new(), future)
    }
}
