//! Which settings are in effect, and replacing them while the service runs
//! ([`Guards::reload`](crate::Guards::reload)).

use std::fmt;
use std::path::Path;

use outbound_guard_settings::{Loader, Settings, SettingsError};

use crate::registry::Guards;

/// What a reload changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// The file the settings came from.
    pub origin: String,
    /// The systems whose settings changed, in name order; the others are untouched.
    pub changed: Vec<String>,
}

/// Why a reload changed nothing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReloadError {
    /// The new file is invalid: the error startup would give for it.
    Invalid(SettingsError),
    /// The new settings add or remove systems: the set of systems is fixed by the code
    /// (each adapter holds its system's guard), so a reload may only change their keys.
    Systems {
        /// The new settings' file.
        origin: String,
        /// Systems the new settings have and the running guards do not.
        added: Vec<String>,
        /// Systems the running guards have and the new settings do not.
        removed: Vec<String>,
    },
}

impl fmt::Display for ReloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReloadError::Invalid(e) => write!(f, "{e}"),
            ReloadError::Systems {
                origin,
                added,
                removed,
            } => {
                write!(f, "{origin}: a reload cannot change the set of systems (fixed by the code that calls them): ")?;
                let list = |names: &[String]| {
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                match (added.is_empty(), removed.is_empty()) {
                    (false, true) => write!(f, "it adds {}", list(added))?,
                    (true, false) => write!(f, "it removes {}", list(removed))?,
                    _ => write!(f, "it adds {} and removes {}", list(added), list(removed))?,
                }
                f.write_str("; nothing was changed, the running settings stay in effect")
            }
        }
    }
}

impl std::error::Error for ReloadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReloadError::Invalid(e) => Some(e),
            ReloadError::Systems { .. } => None,
        }
    }
}

impl Guards {
    /// Replaces every system's settings with `settings`' while calls run, keeping what
    /// the guards know: each breaker's state and its open period, the window's newest
    /// outcomes (a smaller window keeps the newest), half-open trials in progress; calls
    /// in flight keep their bulkhead permits and deadlines, and the bulkhead grows or
    /// shrinks without revoking a permit (a shrink below the permits in use takes them
    /// back as those calls end). New thresholds apply from the next outcome, new
    /// timeouts from the next call. A system's `cb_mode` is applied when it differs from
    /// the previous file's.
    ///
    /// Checked whole before anything changes: settings that add or remove a system are
    /// refused ([`ReloadError::Systems`]) and change nothing. Reloads are serialised;
    /// each is logged (feature `tracing`) and counted in
    /// `resilience_settings_reloads_total{result}` (feature `metrics`).
    ///
    /// ```
    /// use outbound_guard::{Guards, Settings};
    ///
    /// let guards = Guards::new(&Settings::parse("[systems.sber]", "a.toml").unwrap());
    /// let next = Settings::parse("[systems.sber]\ncb_open_duration = 7", "b.toml").unwrap();
    /// let reloaded = guards.reload(&next).unwrap();
    /// assert_eq!(reloaded.changed, ["sber"]);
    /// assert_eq!(guards.get("sber").unwrap().settings().cb_open_duration().as_secs(), 7);
    ///
    /// let more = Settings::parse("[systems.sber]\n[systems.ledger]", "c.toml").unwrap();
    /// assert!(guards.reload(&more).unwrap_err().to_string().contains("adds `ledger`"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ReloadError::Systems`] when the set of systems differs.
    pub fn reload(&self, settings: &Settings) -> Result<Reloaded, ReloadError> {
        let _serial = self.reload_lock();
        let result = self.reload_locked(settings);
        self.report_reload(&result);
        result
    }

    /// Reads the settings file at `path` with the process environment's overrides
    /// (as startup does) and [reloads](Self::reload) it. An invalid file changes
    /// nothing: the error is the one startup would give, logged and counted as
    /// `result="invalid"`.
    ///
    /// # Errors
    ///
    /// [`ReloadError::Invalid`] for a file that cannot be read or is invalid;
    /// [`ReloadError::Systems`] as [`reload`](Self::reload).
    pub fn reload_file(&self, path: impl AsRef<Path>) -> Result<Reloaded, ReloadError> {
        self.reload_with(&Loader::new(), path)
    }

    /// [`reload_file`](Self::reload_file) with a [`Loader`]'s prefix and environment.
    ///
    /// # Errors
    ///
    /// As [`reload_file`](Self::reload_file).
    pub fn reload_with(
        &self,
        loader: &Loader,
        path: impl AsRef<Path>,
    ) -> Result<Reloaded, ReloadError> {
        let _serial = self.reload_lock();
        let result = loader
            .read(path)
            .map_err(ReloadError::Invalid)
            .and_then(|settings| self.reload_locked(&settings));
        self.report_reload(&result);
        result
    }

    fn reload_locked(&self, settings: &Settings) -> Result<Reloaded, ReloadError> {
        let added: Vec<String> = settings
            .names()
            .filter(|name| self.get(name).is_err())
            .map(str::to_owned)
            .collect();
        let removed: Vec<String> = self
            .iter()
            .map(crate::guard::Guard::system)
            .filter(|name| settings.system(name).is_none())
            .map(str::to_owned)
            .collect();
        if !added.is_empty() || !removed.is_empty() {
            return Err(ReloadError::Systems {
                origin: settings.origin().to_owned(),
                added,
                removed,
            });
        }
        let mut changed = Vec::new();
        for guard in self.iter() {
            let Some(new) = settings.system(guard.system()) else {
                continue; // checked above
            };
            let current = guard.settings();
            if *current != *new {
                #[cfg(feature = "tracing")]
                if current.cb_mode() != new.cb_mode() {
                    // The transition's own line says "by an operator": this one says which.
                    tracing::warn!(
                        target: "outbound_guard",
                        system = guard.system(),
                        "{}: cb_mode = \"{}\" in {}, applied by the reload",
                        guard.system(),
                        new.cb_mode(),
                        settings.origin()
                    );
                }
                guard.apply(new);
                changed.push(guard.system().to_owned());
            }
        }
        Ok(Reloaded {
            origin: settings.origin().to_owned(),
            changed,
        })
    }

    fn report_reload(&self, result: &Result<Reloaded, ReloadError>) {
        if self.metrics_on() {
            crate::metrics::settings_reloaded(result.is_ok());
        }
        #[cfg(feature = "tracing")]
        match result {
            Ok(reloaded) => tracing::info!(
                target: "outbound_guard",
                origin = reloaded.origin.as_str(),
                "outbound-guard settings reloaded from {}: {}",
                reloaded.origin,
                if reloaded.changed.is_empty() {
                    "nothing changed".to_owned()
                } else {
                    format!("changed {}", reloaded.changed.join(", "))
                }
            ),
            Err(error) => tracing::error!(
                target: "outbound_guard",
                "outbound-guard settings not reloaded, the running ones stay in effect: {error}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use outbound_guard_settings::Settings;

    use outbound_guard_test_recorder::TestRecorder;

    use crate::registry::Guards;

    const OK: &str = r#"resilience_settings_reloads_total{result="ok"}"#;
    const INVALID: &str = r#"resilience_settings_reloads_total{result="invalid"}"#;

    #[test]
    fn every_reload_is_counted_by_its_result_and_a_bad_one_changes_nothing() {
        let recorder = TestRecorder::new();
        let start = Settings::parse("[systems.sber]\ncb_min_calls = 4", "a.toml").unwrap();
        let next = Settings::parse("[systems.sber]\ncb_min_calls = 5", "b.toml").unwrap();
        let more = Settings::parse("[systems.sber]\n[systems.ledger]", "c.toml").unwrap();
        let dir = std::env::temp_dir().join(format!("og-reload-metric-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, "[systems.sber]\ncb_min_calls = 0\n").unwrap();
        let guards = metrics::with_local_recorder(&*recorder, || {
            let guards = Guards::builder(&start).metrics(true).build();
            guards.reload(&next).unwrap();
            guards.reload(&more).unwrap_err();
            guards.reload_file(&bad).unwrap_err();
            guards.reload_file(dir.join("missing.toml")).unwrap_err();
            guards
        });
        assert_eq!(recorder.counter(OK), Some(1));
        assert_eq!(recorder.counter(INVALID), Some(3));
        assert_eq!(
            guards.get("sber").unwrap().settings().cb_min_calls(),
            5,
            "the valid reload only"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn guards_built_without_metrics_count_no_reload() {
        let recorder = TestRecorder::new();
        let start = Settings::parse("[systems.sber]", "a.toml").unwrap();
        metrics::with_local_recorder(&*recorder, || {
            let guards = Guards::builder(&start).metrics(false).build();
            guards.reload(&start).unwrap();
        });
        assert_eq!(recorder.counter(OK), None);
    }
}
