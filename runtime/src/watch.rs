//! Reloads the settings file when it changes on disk (feature `watch`): see
//! [`Guards::watch`].

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use outbound_guard_settings::Loader;

use crate::registry::Guards;

/// Kubernetes' name for the current version of a mounted `ConfigMap`: the directory's
/// files are symlinks through it, and an update swaps it in one rename.
const CONFIGMAP_DATA: &str = "..data";

/// Watches a settings file while it lives: [`Guards::watch`]. Dropping it stops the
/// watching.
#[must_use = "the file is watched only while this lives"]
pub struct SettingsWatcher {
    path: PathBuf,
    _watcher: RecommendedWatcher,
}

impl fmt::Debug for SettingsWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SettingsWatcher")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The file's directory could not be watched.
#[derive(Debug)]
pub struct WatchError {
    path: PathBuf,
    source: notify::Error,
}

impl fmt::Display for WatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot watch the settings file {} for changes: {}",
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for WatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl Guards {
    /// Reloads the settings file at `path` (usually the one
    /// [`RESILIENCE_SETTINGS`](crate::settings::PATH_VARIABLE) names) whenever it changes,
    /// as [`reload_file`](Self::reload_file) does: with the process environment's
    /// overrides, checked whole, an invalid file changing nothing (logged and counted).
    /// Stops when the returned [`SettingsWatcher`] is dropped.
    ///
    /// It watches the file's directory, not the file, and reloads on any change there
    /// naming the file or `..data`: a Kubernetes `ConfigMap` volume updates its files by
    /// swapping the `..data` symlink, which a watch of the file itself never sees. An
    /// editor's in-place write may be seen half-written: that reload is refused as
    /// invalid and the next event, once the write is finished, applies it.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let settings = outbound_guard::Settings::parse("[systems.sber]", "inline")?;
    /// // In a service: `let settings = outbound_guard::settings!()?;`
    /// let guards = outbound_guard::Guards::new(&settings);
    /// let _watcher = match std::env::var_os(outbound_guard::settings::PATH_VARIABLE) {
    ///     Some(path) => Some(guards.watch(path)?),
    ///     None => None, // the compiled-in file: nothing to watch
    /// };
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`WatchError`] when the directory cannot be watched (it does not exist, or the
    /// system's limit of watches is reached).
    pub fn watch(&self, path: impl AsRef<Path>) -> Result<SettingsWatcher, WatchError> {
        self.watch_with(Loader::new(), path)
    }

    /// [`watch`](Self::watch) with a [`Loader`]'s prefix and environment.
    ///
    /// # Errors
    ///
    /// As [`watch`](Self::watch).
    pub fn watch_with(
        &self,
        loader: Loader,
        path: impl AsRef<Path>,
    ) -> Result<SettingsWatcher, WatchError> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name: OsString = path.file_name().map(ToOwned::to_owned).unwrap_or_default();
        let guards = self.clone();
        let file = path.clone();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            // An error of the watch itself: the next event will tell.
            let Ok(event) = event else { return };
            if concerns(&event, &name) {
                // Logged and counted either way; an invalid file changed nothing.
                let _ = guards.reload_with(&loader, &file);
            }
        })
        .map_err(|source| WatchError {
            path: path.clone(),
            source,
        })?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|source| WatchError {
                path: path.clone(),
                source,
            })?;
        Ok(SettingsWatcher {
            path,
            _watcher: watcher,
        })
    }
}

/// Whether `event` may have changed the file named `name`: a change (not a read)
/// naming it or `..data`.
fn concerns(event: &Event, name: &OsString) -> bool {
    let change = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    };
    change
        && event.paths.iter().any(|p| {
            p.file_name()
                .is_some_and(|n| n == name.as_os_str() || n == CONFIGMAP_DATA)
        })
}
