//! Every system's guard, built once at startup from the settings.

use std::collections::BTreeMap;
use std::sync::Arc;

use resilience_settings::Settings;

use crate::guard::Guard;
use crate::observer::Observer;

/// One [`Guard`] per configured system, built once at startup.
///
/// ```
/// use resilience::{Guards, Settings};
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
    guards: BTreeMap<String, Guard>,
}

/// [`Guards::get`] was asked for a system the settings do not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no system `{system}` in {origin}; {hint}known systems: {known}")]
pub struct UnknownSystem {
    system: String,
    origin: String,
    hint: String,
    known: String,
}

impl Guards {
    /// A guard for every system in `settings`, with no observers.
    pub fn new(settings: &Settings) -> Self {
        Self::with_observers(settings, Vec::new())
    }

    /// A guard for every system in `settings`, each reporting to `observers`.
    pub fn with_observers(settings: &Settings, observers: Vec<Arc<dyn Observer>>) -> Self {
        let guards = settings
            .systems()
            .map(|system| {
                let guard = Guard::with_observers(system, observers.clone());
                (system.name.clone(), guard)
            })
            .collect();
        Guards {
            origin: settings.origin().to_owned(),
            guards,
        }
    }

    /// The guard of `system`; an error naming the known systems if there is none.
    pub fn get(&self, system: &str) -> Result<Guard, UnknownSystem> {
        self.guards.get(system).cloned().ok_or_else(|| {
            let hint = resilience_settings::suggest(system, self.guards.keys().map(String::as_str))
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            let known: Vec<String> = self.guards.keys().map(|k| format!("`{k}`")).collect();
            UnknownSystem {
                system: system.to_owned(),
                origin: self.origin.clone(),
                hint,
                known: if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                },
            }
        })
    }

    /// Every guard, in system-name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Guard> {
        self.guards.values()
    }
}
