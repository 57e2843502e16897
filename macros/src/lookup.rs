//! Finding the service's `resilience.toml` and checking the annotated system against it.
//!
//! The rule a user's crate and the ui-tests share: the file is `resilience.toml` next to
//! the `Cargo.toml` of the crate being compiled (`CARGO_MANIFEST_DIR`). Parsed files are
//! cached per path and invalidated when the file's modification time or size changes,
//! so a long-lived proc-macro server (rust-analyzer) never checks against a stale copy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use resilience_settings::{Settings, FILE_NAME};
use syn::LitStr;

/// A settings file, read and validated.
pub(crate) struct Loaded {
    /// The file's absolute path, for messages and for `include_bytes!` (which makes
    /// cargo rebuild the crate when the file changes).
    pub path: String,
    pub settings: Settings,
}

/// Where the attribute gets its settings from.
pub(crate) trait Lookup {
    /// The settings file, or an error message saying what is wrong and how to fix it.
    fn load(&self) -> Result<Arc<Loaded>, String>;

    /// Whether this expansion should carry the `include_bytes!` that makes cargo
    /// rebuild the crate when the file changes. Once per file per compiler process is
    /// enough (every expansion re-runs on every build), and keeps the other methods'
    /// `cargo expand` free of the file's bytes.
    fn track(&self, path: &str) -> bool;
}

/// The real rule: `$CARGO_MANIFEST_DIR/resilience.toml`.
pub(crate) struct ManifestDir;

type Stamp = (Option<SystemTime>, u64);
type Cached = (Stamp, Result<Arc<Loaded>, String>);

static CACHE: Mutex<Option<HashMap<PathBuf, Cached>>> = Mutex::new(None);

impl Lookup for ManifestDir {
    fn load(&self) -> Result<Arc<Loaded>, String> {
        let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
            return Err(format!(
                "CARGO_MANIFEST_DIR is not set: `#[circuit_breaker]` reads {FILE_NAME} next to the crate's Cargo.toml, so build with cargo"
            ));
        };
        load_cached(&Path::new(&dir).join(FILE_NAME))
    }

    fn track(&self, path: &str) -> bool {
        static TRACKED: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let mut tracked = TRACKED.lock().unwrap_or_else(|p| p.into_inner());
        if tracked.iter().any(|p| p == path) {
            false
        } else {
            tracked.push(path.to_owned());
            true
        }
    }
}

/// Reads `path` unless the cache holds it with the same modification time and size.
fn load_cached(path: &Path) -> Result<Arc<Loaded>, String> {
    let stamp = stamp(path);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((cached, loaded)) = cache.get(path) {
        if *cached == stamp {
            return loaded.clone();
        }
    }
    let loaded = read(path);
    cache.insert(path.to_path_buf(), (stamp, loaded.clone()));
    loaded
}

fn stamp(path: &Path) -> Stamp {
    match std::fs::metadata(path) {
        Ok(meta) => (meta.modified().ok(), meta.len()),
        Err(_) => (None, u64::MAX),
    }
}

fn read(path: &Path) -> Result<Arc<Loaded>, String> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "cannot find the settings file `{shown}`: `#[circuit_breaker]` checks each system against {FILE_NAME} next to this crate's Cargo.toml; create it with one `[systems.NAME]` table per external system"
            )
        } else {
            format!("cannot read the settings file `{shown}`: {e}")
        }
    })?;
    let settings = Settings::parse(&text, &shown).map_err(|e| e.to_string())?;
    Ok(Arc::new(Loaded {
        path: shown,
        settings,
    }))
}

/// The system named by the literal has an entry; otherwise an error on the literal with
/// a "did you mean" and the known systems.
pub(crate) fn check_system(system: &LitStr, loaded: &Loaded) -> syn::Result<()> {
    let name = system.value();
    if loaded.settings.system(&name).is_some() {
        return Ok(());
    }
    let hint = resilience_settings::suggest(&name, loaded.settings.names())
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    let known = resilience_settings::quoted_list(loaded.settings.names());
    Err(syn::Error::new(
        system.span(),
        format!(
            "no system `{name}` in {}; {hint}known systems: {known}. Add a `[systems.{name}]` table to the file, or fix the name",
            loaded.path
        ),
    ))
}

#[cfg(test)]
pub(crate) mod inline {
    //! A lookup over a settings text, for the expansion's unit tests.
    use super::*;

    pub(crate) struct Inline(pub &'static str);

    impl Lookup for Inline {
        fn load(&self) -> Result<Arc<Loaded>, String> {
            let path = "/service/resilience.toml".to_owned();
            let settings = Settings::parse(self.0, &path).map_err(|e| e.to_string())?;
            Ok(Arc::new(Loaded { path, settings }))
        }

        fn track(&self, _: &str) -> bool {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("resilience-lookup-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_missing_file_names_the_path_and_the_fix() {
        let path = temp_dir("missing").join(FILE_NAME);
        let _ = std::fs::remove_file(&path);
        let message = read(&path).err().unwrap();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(
            message.contains("create it with one `[systems.NAME]` table"),
            "{message}"
        );
    }

    #[test]
    fn an_invalid_entry_names_the_file_and_the_key() {
        let path = temp_dir("invalid").join(FILE_NAME);
        std::fs::write(&path, "[systems.sber]\ncb_failure_rate = 1.5\n").unwrap();
        let message = read(&path).err().unwrap();
        assert!(
            message.starts_with(&path.display().to_string()),
            "{message}"
        );
        assert!(
            message.contains("[systems.sber] `cb_failure_rate`"),
            "{message}"
        );
        assert!(message.contains("at most 1"), "{message}");
    }

    #[test]
    fn unparsable_toml_is_reported() {
        let path = temp_dir("syntax").join(FILE_NAME);
        std::fs::write(&path, "[systems.sber\n").unwrap();
        let message = read(&path).err().unwrap();
        assert!(message.contains("not valid TOML"), "{message}");
    }

    #[test]
    fn an_edited_file_is_read_again() {
        let dir = temp_dir("edited");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, "[systems.sber]\n").unwrap();
        let load = || load_cached(&path);
        assert!(load().unwrap().settings.system("customer").is_none());
        std::fs::write(&path, "[systems.sber]\n[systems.customer]\n").unwrap();
        assert!(load().unwrap().settings.system("customer").is_some());
    }
}
