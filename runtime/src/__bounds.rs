//! What the runtime promises of a guard's timing, for a tool that reasons about a guard
//! without running it (`outbound-guard replay` proves its ranges from these). Not a
//! public API: its names may change in any release.

use std::time::Duration;

use outbound_guard_settings::SystemSettings;

/// The shortest and the longest open period a breaker with `settings` gives itself, an
/// upstream's retry hint aside: at least `cb_open_duration`; at most `cb_open_max`, and
/// without a backoff, at most `cb_open_duration` with its whole `cb_open_jitter`.
pub fn open_periods(settings: &SystemSettings) -> (Duration, Duration) {
    let (shortest, longest) = crate::breaker::own_open_periods(settings);
    (
        Duration::from_nanos(shortest),
        Duration::from_nanos(longest),
    )
}

/// The longest a call holds or waits for a bulkhead permit: `bulkhead_wait` for the
/// permit, then `total_timeout` for the call (timers as late as tokio fires them aside).
pub fn longest_hold(settings: &SystemSettings) -> Duration {
    settings
        .bulkhead_wait()
        .saturating_add(settings.total_timeout())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_periods_follow_the_settings() {
        let settings = outbound_guard_settings::Settings::parse(
            "[systems.a]\ncb_open_duration = \"10s\"\ncb_open_jitter = 0.2\ncb_open_max = \"60s\"\n\
             [systems.b]\ncb_open_duration = \"10s\"\ncb_open_backoff = 2\ncb_open_max = \"60s\"\n",
            "t.toml",
        )
        .unwrap();
        let a = settings.system("a").unwrap();
        let b = settings.system("b").unwrap();
        assert_eq!(
            open_periods(a),
            (Duration::from_secs(10), Duration::from_secs(12))
        );
        assert_eq!(
            open_periods(b),
            (Duration::from_secs(10), Duration::from_secs(60))
        );
        assert_eq!(longest_hold(a), a.bulkhead_wait() + a.total_timeout());
    }
}
