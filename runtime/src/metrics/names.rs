//! The series' names, as the exporter and the dashboards see them (the table in
//! [`crate::metrics`]). Only the histogram's is public: an exporter's buckets name it.

/// `resilience_calls_total{system, outcome}`: guarded calls by how they ended.
pub(crate) const CALLS_TOTAL: &str = "resilience_calls_total";
/// `resilience_rejections_total{system, reason}`: calls refused before they started.
pub(crate) const REJECTIONS_TOTAL: &str = "resilience_rejections_total";
/// `resilience_state{system, state}`: 1 for the current state, 0 for the others.
pub(crate) const STATE: &str = "resilience_state";
/// `resilience_failure_rate{system}`: failures / outcomes in the window, 0–1.
pub(crate) const FAILURE_RATE: &str = "resilience_failure_rate";
/// `resilience_call_duration_seconds{system}`: how long started calls ran.
pub const CALL_DURATION_SECONDS: &str = "resilience_call_duration_seconds";
/// `resilience_bulkhead_in_use{system}`: bulkhead permits taken now.
pub(crate) const BULKHEAD_IN_USE: &str = "resilience_bulkhead_in_use";
/// `resilience_bulkhead_permits{system}`: the bulkhead's size.
pub(crate) const BULKHEAD_PERMITS: &str = "resilience_bulkhead_permits";
/// `resilience_bulkhead_limit{system}`: the bulkhead's limit now: its permits when
/// fixed, the adaptive limit (floor to permits) when adaptive.
pub(crate) const BULKHEAD_LIMIT: &str = "resilience_bulkhead_limit";
/// `resilience_transitions_total{system, from, to}`: breaker transitions.
pub(crate) const TRANSITIONS_TOTAL: &str = "resilience_transitions_total";
/// `resilience_open_period_seconds{system}`: the running open period's length, 0 unless
/// open.
pub(crate) const OPEN_PERIOD_SECONDS: &str = "resilience_open_period_seconds";
/// `resilience_observing{system}`: 1 while the breaker is in observe mode (`cb_mode =
/// "observe"`: its state and transitions are what it would have done; it refuses
/// nothing), 0 otherwise.
pub(crate) const OBSERVING: &str = "resilience_observing";
/// `resilience_would_reject_total{system, reason}`: calls an observing breaker let
/// through that it would have refused, by `reason` (`open`, `half_open_full`).
pub(crate) const WOULD_REJECT_TOTAL: &str = "resilience_would_reject_total";
/// `resilience_retry_hints_total{system}`: openings the upstream's retry hint lengthened.
pub(crate) const RETRY_HINTS_TOTAL: &str = "resilience_retry_hints_total";
/// `resilience_settings_reloads_total{result}`: settings reloads, `result` `ok` or
/// `invalid` (the file was invalid or changed the set of systems: nothing changed).
pub(crate) const SETTINGS_RELOADS_TOTAL: &str = "resilience_settings_reloads_total";
