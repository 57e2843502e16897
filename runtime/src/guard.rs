//! The guard: one per system, holding that system's settings, bulkhead and breaker
//! (R-RES-ISO-1/3). Cloning it is cheap and shares all three.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::time::Instant;

use crate::breaker::Breaker;
use crate::bulkhead::{Bulkhead, Change, Limiter};
use crate::metrics::GuardMetrics;
use crate::observer::Observer;
use crate::saturation::SlowHolders;
use outbound_guard_settings::SystemSettings;

/// One system's bulkhead, breaker and timeouts.
///
/// Adapters keep their system's guard in a field and `#[derive(Guarded)]`; the
/// [`#[adapter]`](crate::adapter) attribute on their impl block then runs each call
/// through the guard with [`call_judged`](Guard::call_judged). Code without the attribute calls
/// [`call`](Guard::call) or [`call_judged`](Guard::call_judged); either way the call is one
/// [`GuardedCall`](crate::GuardedCall), whose documentation tells its steps.
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
    /// Replaced whole by a reload; read by [`Guard::settings`], off the call path.
    settings: RwLock<Arc<SystemSettings>>,
    /// The durations every call reads, packed (see `packed`): one relaxed load each.
    total_timeout: AtomicU64,
    slow_threshold: AtomicU64,
    bulkhead_wait: AtomicU64,
    /// Whether a call's end needs more than the breaker's count: an observer wants
    /// calls, or the bulkhead is adaptive (each success a sample). One load at each
    /// call's end answers both; see [`Guard::ends_watched`].
    ends_watched: AtomicBool,
    breaker: Breaker,
    bulkhead: Bulkhead,
    /// The bulkhead's limit when it is adaptive; the only one to resize it.
    limiter: Limiter,
    /// Bulkhead permits held by calls already counted slow.
    slow: SlowHolders,
    metrics: GuardMetrics,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("system", &self.system())
            .field("state", &self.inner.breaker.peek().state)
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// A guard for one system, with no observers: `Guard::builder(settings).build()`.
    pub fn new(settings: &SystemSettings) -> Self {
        Self::builder(settings).build()
    }

    /// A guard for one system with its optional parts: the observers its breaker and
    /// calls report to. A service's guards, one per system with the same observers (and
    /// tracing, metrics), come from [`Guards::builder`](crate::Guards::builder) instead.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use outbound_guard::{Guard, Observer, Settings, Transition};
    ///
    /// struct Audit;
    /// impl Observer for Audit {
    ///     fn on_transition(&self, t: &Transition<'_>) {
    ///         println!("{t}");
    ///     }
    /// }
    ///
    /// let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    /// let guard = Guard::builder(settings.system("sber").unwrap())
    ///     .observer(Arc::new(Audit))
    ///     .build();
    /// assert_eq!(guard.system(), "sber");
    /// ```
    pub fn builder(settings: &SystemSettings) -> GuardBuilder<'_> {
        GuardBuilder {
            settings,
            observers: Vec::new(),
        }
    }

    /// A guard reporting to `observers` and, if given, recording `metrics` (which must
    /// be among the observers too, to see the breaker's transitions).
    pub(crate) fn build(
        settings: &SystemSettings,
        observers: Vec<Arc<dyn Observer>>,
        metrics: GuardMetrics,
    ) -> Self {
        let permits = settings.bulkhead_permits();
        debug_assert!(permits >= 1, "the settings guarantee at least one permit");
        let guard = Guard {
            inner: Arc::new(Inner {
                settings: RwLock::new(Arc::new(settings.clone())),
                total_timeout: AtomicU64::new(packed(settings.total_timeout())),
                slow_threshold: AtomicU64::new(packed(settings.cb_slow_threshold())),
                bulkhead_wait: AtomicU64::new(packed(settings.bulkhead_wait())),
                ends_watched: AtomicBool::new(false),
                breaker: Breaker::observed(settings, observers),
                bulkhead: Bulkhead::new(permits),
                limiter: Limiter::new(settings),
                slow: SlowHolders::default(),
                metrics,
            }),
        };
        guard.inner.breaker.announce_settings(settings);
        // The file's `cb_mode`, if not `auto`.
        guard.inner.breaker.apply_mode(settings.cb_mode(), None);
        // An adaptive bulkhead starts at its first limit (`Limiter::first_limit`).
        guard
            .inner
            .limiter
            .size(&guard.inner.bulkhead, !guard.inner.breaker.observing());
        if let Some(limit) = guard.inner.limiter.limit() {
            guard.inner.breaker.announce_limit(limit);
        }
        guard.watch_ends();
        guard
    }

    /// The guard's metrics (nothing to record unless built with them).
    #[inline]
    pub(crate) fn metrics(&self) -> &GuardMetrics {
        &self.inner.metrics
    }

    /// The system's name: `sber`.
    #[inline]
    pub fn system(&self) -> &str {
        self.inner.breaker.name()
    }

    /// The system's settings, environment overrides applied: the ones in effect now
    /// (a [reload](crate::Guards::reload) replaces them; a caller holding these keeps
    /// its copy).
    pub fn settings(&self) -> Arc<SystemSettings> {
        Arc::clone(
            &self
                .inner
                .settings
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// `total_timeout` in effect: the bound of each call admitted from now on (a
    /// [reload](crate::Guards::reload) changes it for the calls after it). For layers
    /// that pass the budget on, such as a gRPC call's `grpc-timeout`.
    #[inline]
    pub fn total_timeout(&self) -> Duration {
        unpacked(self.inner.total_timeout.load(Ordering::Relaxed))
    }

    /// `cb_slow_threshold` in effect.
    #[inline]
    pub(crate) fn slow_threshold(&self) -> Duration {
        unpacked(self.inner.slow_threshold.load(Ordering::Relaxed))
    }

    /// `bulkhead_wait` in effect.
    #[inline]
    pub(crate) fn bulkhead_wait(&self) -> Duration {
        unpacked(self.inner.bulkhead_wait.load(Ordering::Relaxed))
    }

    /// Applies a reload's settings of this system, keeping what the guard knows: the
    /// breaker's state, window and trials (see [`Breaker`]'s reconfiguration), and the
    /// bulkhead's permits in use. Calls admitted before keep their deadlines; the new
    /// durations and thresholds apply from the next call and the next outcome.
    pub(crate) fn apply(&self, settings: &SystemSettings) {
        debug_assert_eq!(settings.name(), self.system());
        let previous = self.settings().cb_mode();
        self.inner.breaker.reconfigure(settings);
        self.inner
            .metrics
            .bulkhead_resized(settings.bulkhead_permits());
        self.inner
            .total_timeout
            .store(packed(settings.total_timeout()), Ordering::Relaxed);
        self.inner
            .slow_threshold
            .store(packed(settings.cb_slow_threshold()), Ordering::Relaxed);
        self.inner
            .bulkhead_wait
            .store(packed(settings.bulkhead_wait()), Ordering::Relaxed);
        *self
            .inner
            .settings
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(settings.clone());
        self.inner.breaker.announce_settings(settings);
        // Last: a call admitted from here on already has the new parameters.
        self.inner
            .breaker
            .apply_mode(settings.cb_mode(), Some(previous));
        // The bulkhead's new size, once observe mode is settled: an adaptive limit kept
        // where the new ceiling and floor allow.
        let was_adaptive = self.inner.limiter.limit().is_some();
        self.inner.limiter.reconfigure(
            &self.inner.bulkhead,
            settings,
            !self.inner.breaker.observing(),
        );
        self.inner.metrics.bulkhead_limit(self.bulkhead_limit());
        if was_adaptive || self.inner.limiter.limit().is_some() {
            self.inner.breaker.announce_limit(self.bulkhead_limit());
        }
        self.watch_ends();
    }

    /// Whether a call's end is watched: some observer wants calls, or the bulkhead is
    /// adaptive. A call's end tests this one flag, and only when it is set whether it
    /// reports to observers and whether it samples: a fixed bulkhead without call
    /// observers pays one load for both.
    #[inline]
    pub(crate) fn ends_watched(&self) -> bool {
        self.inner.ends_watched.load(Ordering::Relaxed)
    }

    /// Sets [`ends_watched`](Self::ends_watched) from the observers and the bulkhead's
    /// mode: as the guard is built, and after a reload (which may turn the bulkhead
    /// adaptive or fixed; a call ending meanwhile may miss a sample, as the reload
    /// restarts the limiter's window anyway, and a sample taken after the bulkhead
    /// turned fixed is ignored).
    fn watch_ends(&self) {
        let watched =
            !self.inner.breaker.call_observers().is_empty() || self.inner.limiter.sampling();
        self.inner.ends_watched.store(watched, Ordering::Relaxed);
    }

    /// The system's breaker.
    #[inline]
    pub fn breaker(&self) -> &Breaker {
        &self.inner.breaker
    }

    /// The bulkhead's size: `max_connections × 0.8`, at least 1; an adaptive
    /// bulkhead's ceiling.
    pub fn bulkhead_permits(&self) -> usize {
        self.inner.limiter.ceiling()
    }

    /// The bulkhead's limit now: [`bulkhead_permits`](Self::bulkhead_permits) for a
    /// fixed bulkhead; for an adaptive one, the limit its latency gives, between its floor
    /// and its permits, starting at a quarter of them (computed in observe mode too, where
    /// the bulkhead admits up to its permits).
    pub fn bulkhead_limit(&self) -> usize {
        self.inner
            .limiter
            .limit()
            .unwrap_or_else(|| self.bulkhead_permits())
    }

    /// A success that started at `start` ended at `end`, still holding its permit: a
    /// sample for an adaptive bulkhead; nothing for a fixed one. Asked only when
    /// [`ends_watched`](Self::ends_watched).
    #[inline]
    pub(crate) fn succeeded(&self, start: Instant, end: Instant) {
        if self.inner.limiter.sampling() {
            self.adapt(start, end);
        }
    }

    /// Inlined into the call's out-of-line end (`RunningCall`'s), which only a
    /// watched guard reaches.
    #[inline]
    fn adapt(&self, start: Instant, end: Instant) {
        let enforce = !self.inner.breaker.observing();
        if let Some(change) = self
            .inner
            .limiter
            .sample(&self.inner.bulkhead, start, end, enforce)
        {
            self.limit_changed(&change);
        }
    }

    /// The limit moved: its gauge and its observers, and an event when it moved by more
    /// than a permit. Both are given the limit read after it is set, until that read
    /// agrees: a change made meanwhile on another thread is never left behind by this
    /// one's (the last value each is given is the limit).
    #[cold]
    fn limit_changed(&self, change: &Change) {
        let mut limit = self.bulkhead_limit();
        loop {
            self.inner.metrics.bulkhead_limit(limit);
            self.inner.breaker.announce_limit(limit);
            let again = self.bulkhead_limit();
            if again == limit {
                break;
            }
            limit = again;
        }
        if change.is_jump() {
            crate::hooks::limit_changed(self.system(), change);
        }
    }

    /// Bulkhead permits taken right now.
    pub fn in_flight(&self) -> usize {
        self.inner.bulkhead.in_use()
    }

    /// Bulkhead permits held right now by calls already past `cb_slow_threshold`.
    /// When it equals [`bulkhead_permits`](Self::bulkhead_permits), the system is
    /// hanging, not busy: see [`call_judged`](Self::call_judged).
    pub(crate) fn slow_in_flight(&self) -> usize {
        self.inner.slow.held()
    }

    #[inline]
    pub(crate) fn bulkhead(&self) -> &Bulkhead {
        &self.inner.bulkhead
    }

    #[inline]
    pub(crate) fn slow_holders(&self) -> &SlowHolders {
        &self.inner.slow
    }
}

/// `d` as `seconds << 32 | nanoseconds`, saturating at `u32::MAX` seconds (settings
/// bound durations to a day): read back by [`unpacked`] without a division, as every
/// call reads two of them.
fn packed(d: Duration) -> u64 {
    let d = d.min(Duration::new(u64::from(u32::MAX), 999_999_999));
    d.as_secs() << 32 | u64::from(d.subsec_nanos())
}

/// The duration [`packed`] stored.
#[inline]
fn unpacked(word: u64) -> Duration {
    Duration::new(word >> 32, (word & u64::from(u32::MAX)) as u32)
}

/// Builds a [`Guard`]; from [`Guard::builder`].
#[must_use = "nothing is built until `build`"]
pub struct GuardBuilder<'s> {
    settings: &'s SystemSettings,
    observers: Vec<Arc<dyn Observer>>,
}

impl std::fmt::Debug for GuardBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardBuilder")
            .field("system", &self.settings.name())
            .field("observers", &self.observers.len())
            .finish()
    }
}

impl GuardBuilder<'_> {
    /// Reports the guard's transitions, and every call's outcome if the observer
    /// [wants them](Observer::wants_calls), to `observer`, after the ones added before.
    pub fn observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observers.push(observer);
        self
    }

    /// The guard.
    pub fn build(self) -> Guard {
        Guard::build(self.settings, self.observers, GuardMetrics::none())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{packed, unpacked};

    #[test]
    fn durations_are_stored_whole_and_saturate_beyond_u32_seconds() {
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(1_500),
            Duration::from_secs(86_400),
            Duration::new(u64::from(u32::MAX), 999_999_999),
        ] {
            assert_eq!(unpacked(packed(d)), d);
        }
        assert_eq!(
            unpacked(packed(Duration::MAX)),
            Duration::new(u64::from(u32::MAX), 999_999_999)
        );
    }
}
