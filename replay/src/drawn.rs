//! Settings drawn at random for the randomised checks of the replay's ranges and proof,
//! key by key from the settings crate's own list ([`KEYS`]): a key added there is a
//! compile error here until it is either drawn or said not to change a replay, and
//! [`tests::every_key_that_changes_a_replay_is_varied`] fails where a drawn key takes
//! only one value.

use std::fmt::Write as _;

use outbound_guard_settings::{Key, Settings, KEYS};

/// The scale of a check's settings against its recordings, milliseconds: each key is
/// drawn from its list here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Regime {
    /// `cb_window_size` from `window.0` to `window.1`; `cb_min_calls` up to it.
    pub window: (u64, u64),
    /// `cb_failure_rate`.
    pub rates: &'static [f64],
    /// `cb_open_duration`: its lowest, its highest, and the step between.
    pub open_ms: (u64, u64, u64),
    /// `cb_open_max`, a multiple of the open duration.
    pub open_max_times: &'static [u64],
    /// `cb_open_backoff`.
    pub backoffs: &'static [f64],
    /// `cb_open_jitter`.
    pub jitters: &'static [f64],
    /// `cb_half_open_calls` up to this.
    pub trials: u64,
    /// `read_timeout`, `total_timeout`, `cb_slow_threshold` together.
    pub timeouts_ms: &'static [(u64, u64, u64)],
    /// `max_connections`.
    pub connections: &'static [u64],
    /// `bulkhead_wait`.
    pub waits_ms: &'static [u64],
}

/// One of `values`, at random.
fn one<T: Copy>(rng: &mut fastrand::Rng, values: &[T]) -> T {
    values[rng.usize(..values.len())]
}

/// The value drawn for `key` under `regime` (its TOML), given the ones drawn before it
/// in [`KEYS`]' order; `None` for a key that changes no replay, with why.
fn value(
    rng: &mut fastrand::Rng,
    key: Key,
    regime: &Regime,
    window: u64,
    open: u64,
    timeouts: (u64, u64, u64),
) -> Option<String> {
    let ms = |n: u64| format!("\"{n}ms\"");
    Some(match key {
        // The replayed upstream answers without a URL, and the HTTP client's idle pool
        // is not the guard's; `cb_mode` is replayed as `auto` (the question is what the
        // breaker would have refused), an operator's mode changes coming from the
        // recording. The replay runs the bulkhead at its permits: how an adaptive limit
        // would have done on a recording is not for a replay to say.
        Key::BaseUrl | Key::MaxKeepalive | Key::CbMode | Key::Bulkhead | Key::BulkheadFloor => {
            return None
        }
        // Nothing is connected to, but it must stay below `read_timeout`.
        Key::ConnectTimeout => ms(1),
        Key::ReadTimeout => ms(timeouts.0),
        Key::TotalTimeout => ms(timeouts.1),
        Key::CbSlowThreshold => ms(timeouts.2),
        Key::CbWindowSize => window.to_string(),
        Key::CbMinCalls => (1 + rng.u64(..window)).to_string(),
        Key::CbFailureRate => one(rng, regime.rates).to_string(),
        Key::CbOpenDuration => ms(open),
        Key::CbOpenMax => ms(open * one(rng, regime.open_max_times)),
        Key::CbOpenBackoff => one(rng, regime.backoffs).to_string(),
        Key::CbOpenJitter => one(rng, regime.jitters).to_string(),
        Key::CbHalfOpenCalls => (1 + rng.u64(..regime.trials)).to_string(),
        Key::MaxConnections => one(rng, regime.connections).to_string(),
        Key::BulkheadWait => ms(one(rng, regime.waits_ms)),
    })
}

/// Keys set to one value: they change no replay, but their value must be valid.
const CONSTANT: [Key; 1] = [Key::ConnectTimeout];

/// Settings of one system `s`, every key that changes a replay drawn under `regime`;
/// with their text, for a failing case's message.
pub(crate) fn settings(rng: &mut fastrand::Rng, regime: &Regime) -> (Settings, String) {
    let (low, high) = regime.window;
    let window = low + rng.u64(..=high - low);
    let (first, last, step) = regime.open_ms;
    let open = first + step * rng.u64(..=(last - first) / step.max(1));
    let timeouts = one(rng, regime.timeouts_ms);
    let mut text = "[systems.s]\n".to_owned();
    for key in KEYS {
        if let Some(v) = value(rng, key, regime, window, open, timeouts) {
            let _ = writeln!(text, "{} = {v}", key.name());
        }
    }
    let settings = Settings::parse(&text, "drawn.toml")
        .unwrap_or_else(|e| panic!("drawn settings must be valid: {}\n{text}", e.message()));
    (settings, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDE: Regime = Regime {
        window: (1, 4),
        rates: &[0.3, 0.5, 1.0],
        open_ms: (20, 80, 20),
        open_max_times: &[1, 4],
        backoffs: &[1.0, 3.0],
        jitters: &[0.0, 0.9],
        trials: 3,
        timeouts_ms: &[(24, 25, 24), (45, 60, 20)],
        connections: &[1, 3, 10],
        waits_ms: &[0, 3, 15],
    };

    #[test]
    fn every_key_that_changes_a_replay_is_varied() {
        let mut rng = fastrand::Rng::with_seed(7);
        let texts: Vec<String> = (0..200).map(|_| settings(&mut rng, &WIDE).1).collect();
        for key in KEYS {
            let values: std::collections::BTreeSet<&str> = texts
                .iter()
                .filter_map(|t| {
                    t.lines()
                        .find_map(|l| l.strip_prefix(&format!("{} = ", key.name())))
                })
                .collect();
            let drawn = value(&mut rng, key, &WIDE, 2, 20, (24, 25, 24)).is_some();
            if CONSTANT.contains(&key) {
                assert_eq!(values.len(), 1, "{key}");
            } else if drawn {
                assert!(
                    values.len() >= 2,
                    "{key} is drawn but never varied: {values:?}"
                );
            } else {
                assert!(values.is_empty(), "{key} is said not to change a replay");
            }
        }
    }
}
