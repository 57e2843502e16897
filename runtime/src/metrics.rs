//! Prometheus-style metrics through the [`metrics`](https://docs.rs/metrics/0.24) facade
//! (feature `metrics`, off by default: without it none of this is compiled).
//!
//! Install a recorder (for example `metrics-exporter-prometheus`) **before** building the
//! guards: [`Guards::new`](crate::Guards::new) then registers, describes and sets the
//! initial value of every series below for **every configured system**, so a dashboard
//! shows a system before its first call. The guards keep the handles; a call records
//! through them without looking anything up. Turn it off per build with
//! [`GuardsBuilder::metrics(false)`](crate::GuardsBuilder::metrics).
//!
//! | name | type | labels | meaning |
//! |---|---|---|---|
//! | `resilience_calls_total` | counter | `system`, `outcome` | Guarded calls by how they ended. `outcome`: `success`, `failure` (an error that counts, or a panic), `slow` (finished after `cb_slow_threshold`; counted as a breaker failure), `timeout` (cut off at `total_timeout`), `rejected` (the breaker or the bulkhead refused it; see `resilience_rejections_total`), `cancelled` (the caller dropped it; not counted by the breaker unless it had already run past `cb_slow_threshold`). |
//! | `resilience_rejections_total` | counter | `system`, `reason` | Calls refused before they started. `reason`: `open`, `half_open_full`, `forced_open`, `bulkhead_full` ([`Cause::as_str`](crate::Cause::as_str)). |
//! | `resilience_state` | gauge | `system`, `state` | 1 for the breaker's current state, 0 for the other four (during a transition the new state is set to 1 before the old one is cleared, so a scrape may see both for an instant, never none). `state`: `closed`, `open`, `half_open`, `forced_open`, `disabled`. To alert, take `open` and `half_open` together (they alternate every `cb_open_duration` during an outage), as the rules shipped in the repository's `ops/` do. An open breaker moves to `half_open` when `cb_open_duration` has passed on the next call or reading ([`Guards::health`](crate::Guards::health), [`Guards::refresh`](crate::Guards::refresh)): call `refresh` in the `/metrics` handler and an idle system never looks stuck open. |
//! | `resilience_failure_rate` | gauge | `system` | Failures / outcomes in the breaker's window, 0–1 (0 for an empty window; the window restarts with every state). While open: the rate that tripped it (the window's at the moment it opened, or the trials' when one failed), so a dashboard shows why. |
//! | `resilience_call_duration_seconds` | histogram | `system` | How long calls ran, in seconds, for calls that started (success, failure, slow, timeout). |
//! | `resilience_bulkhead_in_use` | gauge | `system` | Bulkhead permits taken right now. |
//! | `resilience_bulkhead_permits` | gauge | `system` | The bulkhead's size (`max_connections × 0.8`), which stays the ceiling of an adaptive bulkhead; saturation is `in_use / permits` for a fixed bulkhead. |
//! | `resilience_bulkhead_limit` | gauge | `system` | The bulkhead's limit now: its permits when fixed; when adaptive, the limit its latency gives (floor to permits), computed in observe mode too; saturation of an adaptive bulkhead is `in_use / limit`. |
//! | `resilience_open_period_seconds` | gauge | `system` | The length of the running open period, set as the breaker opens: `cb_open_duration`, or longer when backed off (`cb_open_backoff`), jittered (`cb_open_jitter`) or as the upstream's retry hint asked; at most `cb_open_max`. 0 unless open. |
//! | `resilience_retry_hints_total` | counter | `system` | Openings made longer by the upstream's retry hint (`Retry-After` of a 429 or 503, `grpc-retry-pushback-ms`). |
//! | `resilience_transitions_total` | counter | `system`, `from`, `to` | Breaker transitions, operators' actions included. The 15 transitions the breaker can make are registered at 0: its own four (closed → open, open → half-open, half-open → closed or open) and an operator's force open, disable and reset from any other state. An action that finds the breaker in its target state is no transition: not counted (a reset of a closed breaker empties its window and is logged, but counts no `closed → closed`). In observe mode, the transitions it would have made. |
//! | `resilience_observing` | gauge | `system` | 1 while the breaker is in observe mode (`cb_mode = "observe"`): its state and transitions are what it would have done, and it refuses nothing; 0 otherwise. |
//! | `resilience_would_reject_total` | counter | `system`, `reason` | Calls an observing breaker let through that it would have refused. `reason`: `open`, `half_open_full`. |
//! | `resilience_settings_reloads_total` | counter | `result` | Settings reloads ([`Guards::reload`](crate::Guards::reload) and the ones it stands for): `ok`, or `invalid` (the file was invalid or changed the set of systems: nothing changed). |
//!
//! `resilience_state` is one series per state (the `kube_pod_status_phase` style) rather
//! than a numeric code: queries and alerts name the state, and adding a state never
//! renumbers the others.
//!
//! **Histogram buckets.** The facade has none, and `metrics-exporter-prometheus` exports a
//! histogram without buckets as a summary (quantiles of one process, which cannot be
//! aggregated across replicas, and `histogram_quantile` cannot read). Give the exporter
//! [`duration_buckets`], which reach past every system's `total_timeout`, so that a
//! timed-out call lands in a bucket rather than `+Inf`:
//!
//! ```ignore
//! use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
//! use outbound_guard::metrics::{duration_buckets, CALL_DURATION_SECONDS};
//!
//! let settings = outbound_guard::settings!()?;
//! PrometheusBuilder::new()
//!     .set_buckets_for_metric(
//!         Matcher::Full(CALL_DURATION_SECONDS.into()),
//!         &duration_buckets(&settings),
//!     )?
//!     .install_recorder()?;
//! let guards = outbound_guard::Guards::new(&settings); // after the recorder
//! ```
//!
//! With metrics on, a call costs a few atomic updates more (the failure rate is read
//! without a lock). The state gauges move only with transitions, which reach the metrics
//! in the order they happened, so once the breaker is quiet they show its state; the
//! failure rate is shown after every recorded call and read again, so the last value
//! shown is the last one counted (a transition reported late by another thread can show
//! 0 until the next call).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use ::metrics::Unit;
use outbound_guard_settings::{Settings, SystemSettings};

use self::system::SystemMetrics;
use crate::breaker::Breaker;
use crate::observer::Observer;

mod names;
mod system;
#[cfg(test)]
mod tests;

// The histogram's name is public, for the exporter's buckets (below); the others are
// the table's, read by queries rather than by Rust code.
pub use self::names::CALL_DURATION_SECONDS;
use self::names::{
    BULKHEAD_IN_USE, BULKHEAD_LIMIT, BULKHEAD_PERMITS, CALLS_TOTAL, FAILURE_RATE, OBSERVING,
    OPEN_PERIOD_SECONDS, REJECTIONS_TOTAL, RETRY_HINTS_TOTAL, SETTINGS_RELOADS_TOTAL, STATE,
    TRANSITIONS_TOTAL, WOULD_REJECT_TOTAL,
};

/// The standard ladder of bucket bounds [`duration_buckets`] takes from, in seconds:
/// Prometheus' default buckets, continued up to a day (the longest `total_timeout`).
const LADDER: [f64; 19] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0,
    900.0, 3600.0, 86_400.0,
];

/// Bucket bounds for [`CALL_DURATION_SECONDS`], in seconds, that cover every system of
/// `settings`: the standard ladder (5 ms to 10 s as Prometheus' defaults, then 15 s,
/// 30 s, 1 min, 2 min, 5 min, …) up to the first bound at or past the largest
/// `total_timeout`, plus each system's `total_timeout` itself. So a call cut off at its
/// timeout lands in a bucket of its own, never in `+Inf` alone. With the guide's
/// defaults (35 s): `[0.005, …, 10, 15, 30, 35, 60]`.
///
/// Give them to the exporter, before the guards are built (see the [module](self)):
/// `PrometheusBuilder::new().set_buckets_for_metric(Matcher::Full(CALL_DURATION_SECONDS.into()), &duration_buckets(&settings))`.
pub fn duration_buckets(settings: &Settings) -> Vec<f64> {
    let timeouts: Vec<f64> = settings
        .systems()
        .map(|system| system.total_timeout().as_secs_f64())
        .collect();
    let largest = timeouts.iter().copied().fold(0.0, f64::max);
    let mut buckets: Vec<f64> = Vec::with_capacity(LADDER.len() + timeouts.len());
    for bound in LADDER {
        buckets.push(bound);
        if bound >= largest {
            break;
        }
    }
    buckets.extend(timeouts);
    buckets.sort_by(f64::total_cmp);
    buckets.dedup();
    buckets
}

/// Whether [`Guards::new`](crate::Guards::new) registers metrics: with the feature.
/// (The unit tests compile this module without it, and turn metrics on where they want
/// them.)
pub(crate) const ON_BY_DEFAULT: bool = cfg!(feature = "metrics");

/// One guard's metrics: its system's handles, or none (metrics turned off for its set of
/// guards, or a guard built alone). The same API as the stub compiled without the
/// feature (`metrics/off.rs`), so the guard and its calls have no `cfg`s of their own.
#[derive(Debug, Clone)]
pub(crate) struct GuardMetrics(Option<Arc<SystemMetrics>>);

impl GuardMetrics {
    /// Nothing to record.
    pub(crate) const fn none() -> Self {
        GuardMetrics(None)
    }

    /// Registers every series of `settings`' system (see [`SystemMetrics::register`]).
    pub(crate) fn register(settings: &SystemSettings) -> Self {
        GuardMetrics(Some(Arc::new(SystemMetrics::register(settings))))
    }

    /// The observer that counts the guard's transitions and calls, if any.
    pub(crate) fn observer(&self) -> Option<Arc<dyn Observer>> {
        self.0.clone().map(|metrics| metrics as Arc<dyn Observer>)
    }

    /// A bulkhead permit was taken.
    #[inline]
    pub(crate) fn bulkhead_taken(&self) {
        if let Some(metrics) = &self.0 {
            metrics.in_use.increment(1.0);
        }
    }

    /// A bulkhead permit was returned. The recorder is user code and this may run while
    /// unwinding, where a second panic would abort the process: contained.
    #[inline]
    pub(crate) fn bulkhead_returned(&self) {
        if let Some(metrics) = &self.0 {
            let _ = catch_unwind(AssertUnwindSafe(|| metrics.in_use.decrement(1.0)));
        }
    }

    /// After an outcome was recorded on `breaker`: its window's failure rate. Shown, then
    /// read again: a rate another thread recorded after this one read its own is shown
    /// again, so the last value shown is the last one counted. The state gauges are only
    /// moved by transitions, which reach every observer in the order they happened: a
    /// state read here could already be stale, and would overwrite a later transition's.
    #[inline]
    pub(crate) fn recorded(&self, breaker: &Breaker) {
        if let Some(metrics) = &self.0 {
            let mut rate = breaker.failure_rate();
            loop {
                metrics.failure_rate.set(rate);
                let again = breaker.failure_rate();
                if again.to_bits() == rate.to_bits() {
                    break;
                }
                rate = again;
            }
        }
    }
}

/// Describes every metric to the current recorder: units and help texts.
pub(crate) fn describe() {
    ::metrics::describe_counter!(
        CALLS_TOTAL,
        Unit::Count,
        "Guarded calls by system and outcome."
    );
    ::metrics::describe_counter!(
        REJECTIONS_TOTAL,
        Unit::Count,
        "Calls the breaker or the bulkhead refused before they started, by reason."
    );
    ::metrics::describe_gauge!(
        STATE,
        "1 for the breaker's current state, 0 for the others."
    );
    ::metrics::describe_gauge!(
        FAILURE_RATE,
        "Failures / outcomes in the breaker's window, 0 to 1."
    );
    ::metrics::describe_histogram!(
        CALL_DURATION_SECONDS,
        Unit::Seconds,
        "How long guarded calls ran, for calls that started."
    );
    ::metrics::describe_gauge!(BULKHEAD_IN_USE, Unit::Count, "Bulkhead permits taken now.");
    ::metrics::describe_gauge!(BULKHEAD_PERMITS, Unit::Count, "The bulkhead's size.");
    ::metrics::describe_gauge!(
        BULKHEAD_LIMIT,
        Unit::Count,
        "The bulkhead's limit now: its size when fixed, the adaptive limit when adaptive."
    );
    ::metrics::describe_counter!(
        TRANSITIONS_TOTAL,
        Unit::Count,
        "Breaker transitions, operators' actions included."
    );
    ::metrics::describe_gauge!(
        OPEN_PERIOD_SECONDS,
        Unit::Seconds,
        "The running open period's length (backed off, jittered or as the upstream asked); 0 unless open."
    );
    ::metrics::describe_counter!(
        RETRY_HINTS_TOTAL,
        Unit::Count,
        "Openings the upstream's retry hint (Retry-After, grpc-retry-pushback-ms) lengthened."
    );
    ::metrics::describe_gauge!(
        OBSERVING,
        Unit::Count,
        "1 while the breaker is in observe mode: its state is what it would be, and it refuses nothing."
    );
    ::metrics::describe_counter!(
        WOULD_REJECT_TOTAL,
        Unit::Count,
        "Calls an observing breaker let through that it would have refused."
    );
}

/// Counts one reload.
pub(crate) fn settings_reloaded(ok: bool) {
    ::metrics::describe_counter!(
        SETTINGS_RELOADS_TOTAL,
        Unit::Count,
        "Settings reloads by result: ok, or invalid (nothing changed)."
    );
    let result = if ok { "ok" } else { "invalid" };
    ::metrics::counter!(SETTINGS_RELOADS_TOTAL, "result" => result).increment(1);
}

impl GuardMetrics {
    /// The bulkhead's new size after a reload.
    pub(crate) fn bulkhead_resized(&self, permits: usize) {
        if let Some(metrics) = &self.0 {
            ::metrics::gauge!(BULKHEAD_PERMITS, "system" => metrics.system.clone())
                .set(permits as f64);
        }
    }

    /// The bulkhead's limit moved (or a reload set it): `resilience_bulkhead_limit`. It
    /// runs inside a call's end: a panicking recorder (user code) is contained.
    pub(crate) fn bulkhead_limit(&self, limit: usize) {
        if let Some(metrics) = &self.0 {
            let _ = catch_unwind(AssertUnwindSafe(|| metrics.limit.set(limit as f64)));
        }
    }
}
