//! Which settings are in effect, and replacing them while the service runs.

use outbound_guard_settings::Settings;

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
