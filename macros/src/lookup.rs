//! Finding the service's `resilience.toml` and checking the annotated system against it.
//!
//! The rule is the settings crate's `__private::candidate_files`, shared with `settings!`,
//! the build script helper and the runtime's messages: the file named by the crate's `[package.metadata.outbound-guard]
//! settings = "…"` alone if it names one; otherwise `resilience.toml` next to the
//! crate's `Cargo.toml`, then the workspace root's.
//!
//! Files are named relative to the crate in every message (as rustc names source
//! files), so the messages read the same on every machine and under any target
//! directory. Parsed files are cached per path and invalidated when the file's
//! modification time or size changes, so a long-lived proc-macro server
//! (rust-analyzer) never checks against a stale copy; so are the candidates found from
//! a crate's `Cargo.toml` and its ancestors', invalidated when any of those changes. Nothing else is kept between
//! expansions: each one's output depends only on its tokens and the files it reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use outbound_guard_settings::__private::{crate_candidates, tried, Candidate};
use outbound_guard_settings::{Settings, FILE_NAME};
use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

/// A settings file, read and validated.
pub(crate) struct Loaded {
    /// The file's absolute path, for the `include_bytes!` that makes cargo rebuild the
    /// crate when the file changes (never shown in a message or compiled into a value).
    pub path: String,
    /// The file's path relative to the crate, for messages.
    pub shown: String,
    /// The crate's `Cargo.toml`, absolute: it may name the file
    /// (`[package.metadata.outbound-guard] settings`), so cargo tracks it too.
    pub manifest: String,
    pub settings: Settings,
}

/// Where the attribute gets its settings from.
pub(crate) trait Lookup {
    /// The settings file, or the message saying why there is none; `who` says what
    /// reads the file, for that message (`` `sber`, named by this `#[outbound_guard::adapter]`
    /// block, is checked against it ``).
    fn load(&self, who: &str) -> Result<Arc<Loaded>, String>;

    /// Whether an expansion that read the file at `path` should carry the
    /// `include_bytes!`s that make cargo rebuild the crate when the file or `Cargo.toml`
    /// changes: not when the crate's build script tracks them
    /// (`outbound_guard_settings::build::track`).
    fn track(&self, path: &str) -> bool;
}

/// The real rule, from `CARGO_MANIFEST_DIR`.
pub(crate) struct ManifestDir;

type Stamp = (Option<SystemTime>, u64);
type Cached = (Stamp, Result<Arc<Loaded>, String>);

/// Parsed files by path and the crate reading them (which names the file in messages),
/// with the modification time and size they were read at. The only state kept across
/// expansions: a file read again when it changes, so it never changes what an expansion
/// emits.
static CACHE: Mutex<Option<HashMap<(PathBuf, String), Cached>>> = Mutex::new(None);

/// A crate's candidate files, by its directory, with the stamps of the `Cargo.toml`
/// files they were found from (see [`candidates`]). Like [`CACHE`], never changes what
/// an expansion emits.
type CachedCandidates = (Vec<Stamp>, Result<Vec<Candidate>, String>);
static CANDIDATES: Mutex<Option<HashMap<PathBuf, CachedCandidates>>> = Mutex::new(None);

impl Lookup for ManifestDir {
    fn load(&self, who: &str) -> Result<Arc<Loaded>, String> {
        let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
            return Err(format!(
                "CARGO_MANIFEST_DIR is not set: {FILE_NAME} is found from the crate's Cargo.toml ({who}), so build with cargo"
            ));
        };
        load_at(Path::new(&dir), who)
    }

    fn track(&self, path: &str) -> bool {
        // The crate's build script tracks this very file (`build::track`): nothing to add.
        std::env::var_os(outbound_guard_settings::__private::TRACKED_ENV)
            .is_none_or(|tracked| Path::new(&tracked) != Path::new(path))
    }
}

/// The settings file of the crate in `dir`, read and validated.
fn load_at(dir: &Path, who: &str) -> Result<Arc<Loaded>, String> {
    let found = find(dir, who)?;
    let manifest = dir.join("Cargo.toml").display().to_string();
    load_cached(&found.path, &found.shown, &manifest)
}

/// `(include_str!(path), "resilience.toml (compiled in)")` for `settings!`: the file the
/// attribute checks against, named as messages name it (relative to the crate) and
/// marked as compiled in, so that no path of the build machine reaches the binary, nor
/// `Settings::origin()`, the startup line or an environment override's error. The file
/// and `Cargo.toml` are tracked by cargo as the attribute tracks them.
pub(crate) fn settings_file() -> proc_macro2::TokenStream {
    let found = match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(dir) => find(Path::new(&dir), "`outbound_guard::settings!()` compiles it in")
            .map(|c| (c, Path::new(&dir).join("Cargo.toml"))),
        None => Err("CARGO_MANIFEST_DIR is not set: `settings!` looks for the crate's settings file from its Cargo.toml, so build with cargo".to_owned()),
    };
    match found {
        Ok((found, manifest)) => {
            let path = found.path.display().to_string();
            let manifest = manifest.display().to_string();
            let origin = compiled_in(&found.shown);
            quote::quote!({
                const _: &[u8] = ::core::include_bytes!(#manifest);
                (::core::include_str!(#path), #origin)
            })
        }
        Err(message) => syn::Error::new(proc_macro2::Span::call_site(), message).to_compile_error(),
    }
}

/// How `settings!` names the compiled-in file: `resilience.toml (compiled in)`.
fn compiled_in(shown: &str) -> String {
    format!("{shown} (compiled in)")
}

/// The crate's settings file: the first candidate that exists, or an error listing
/// every file tried, named relative to the crate, and saying the fix: the
/// `[package.metadata.outbound-guard] settings` key when a settings file exists elsewhere
/// in the workspace (a binary's, beside the adapters crate), else to create one.
fn find(dir: &Path, who: &str) -> Result<Candidate, String> {
    let candidates = candidates(dir)?;
    if let Some(found) = candidates.iter().find(|c| c.path.is_file()) {
        return Ok(found.clone());
    }
    let tried = tried(&candidates);
    let named = candidates
        .iter()
        .any(|c| c.kind == outbound_guard_settings::__private::CandidateKind::Metadata);
    let elsewhere = elsewhere(dir, &candidates);
    let fix = match (named, elsewhere.first()) {
        (true, _) => "fix the path in `[package.metadata.outbound-guard] settings` in this crate's Cargo.toml, or create the file with one `[systems.NAME]` table per external system".to_owned(),
        (false, Some(other)) => format!(
            "the workspace has `{other}`: to use it, name it in this crate's Cargo.toml, `[package.metadata.outbound-guard] settings = \"{other}\"`; or create `{FILE_NAME}` next to the Cargo.toml with one `[systems.NAME]` table per external system"
        ),
        (false, None) => "create it with one `[systems.NAME]` table per external system".to_owned(),
    };
    Err(format!(
        "cannot find the settings file: tried {tried}; {who}; {fix}"
    ))
}

/// The candidate files of the crate in `dir` (`crate_candidates`), cached with the
/// stamps of every `Cargo.toml` from `dir` up, the files that rule reads: parsing them
/// on each expansion costs a debug-built macro more than the rest of a method's
/// expansion in a workspace member, and a file that changes is read again.
fn candidates(dir: &Path) -> Result<Vec<Candidate>, String> {
    let stamps: Vec<Stamp> = dir
        .ancestors()
        .map(|dir| stamp(&dir.join("Cargo.toml")))
        .collect();
    let mut cache = CANDIDATES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((cached, found)) = cache.get(dir) {
        if *cached == stamps {
            return found.clone();
        }
    }
    let found = crate_candidates(dir).map_err(|e| e.to_string());
    cache.insert(dir.to_path_buf(), (stamps, found.clone()));
    found
}

/// Settings files elsewhere in the crate's workspace (not among `candidates`), named
/// relative to the crate, nearest first: a few levels deep, skipping `target` and hidden
/// directories. Read only when the crate has no settings file.
fn elsewhere(dir: &Path, candidates: &[Candidate]) -> Vec<String> {
    let root = outbound_guard_settings::__private::workspace_root(dir)
        .unwrap_or_else(|| dir.to_path_buf());
    let Ok(below) = dir.strip_prefix(&root) else {
        return Vec::new();
    };
    let up = "../".repeat(below.components().count());
    let mut found = Vec::new();
    let mut level = vec![root.clone()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for folder in level {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            let mut entries: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            for path in entries {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" && name != "node_modules" {
                        next.push(path);
                    }
                } else if name == FILE_NAME && !candidates.iter().any(|c| c.path == path) {
                    if let Ok(rest) = path.strip_prefix(&root) {
                        found.push(format!("{up}{}", rest.display()));
                    }
                }
            }
        }
        level = next;
    }
    found
}

/// Reads `path` unless the cache holds it with the same modification time and size.
fn load_cached(path: &Path, shown: &str, manifest: &str) -> Result<Arc<Loaded>, String> {
    let stamp = stamp(path);
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    let key = (path.to_path_buf(), manifest.to_owned());
    if let Some((cached, loaded)) = cache.get(&key) {
        if *cached == stamp {
            return loaded.clone();
        }
    }
    let loaded = read(path, shown, manifest);
    cache.insert(key, (stamp, loaded.clone()));
    loaded
}

fn stamp(path: &Path) -> Stamp {
    match std::fs::metadata(path) {
        Ok(meta) => (meta.modified().ok(), meta.len()),
        Err(_) => (None, u64::MAX),
    }
}

fn read(path: &Path, shown: &str, manifest: &str) -> Result<Arc<Loaded>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the settings file `{shown}`: {e}"))?;
    let settings = Settings::parse(&text, shown).map_err(|e| e.to_string())?;
    Ok(Arc::new(Loaded {
        path: path.display().to_string(),
        shown: shown.to_owned(),
        manifest: manifest.to_owned(),
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
    let hint = outbound_guard_settings::__private::did_you_mean(&name, loaded.settings.names());
    let known = outbound_guard_settings::__private::quoted_list(loaded.settings.names());
    Err(syn::Error::new(
        system.span(),
        format!(
            "no system `{name}` in {}; {hint}known systems: {known}. Add a `[systems.{name}]` table to the file, or fix the name",
            loaded.shown
        ),
    ))
}

/// Checks `system` against the settings file: an error on the literal if the file is
/// missing or wrong, or has no such system. Otherwise the item that makes cargo rebuild
/// the crate when an input of the check changes, unless the crate's build script tracks
/// them (`outbound_guard_settings::build::track`).
pub(crate) fn settings(
    system: &syn::LitStr,
    lookup: &dyn Lookup,
    who: &str,
) -> syn::Result<Option<TokenStream>> {
    let who = format!(
        "`{}`, named by {who}, is checked against it",
        system.value()
    );
    let loaded = lookup
        .load(&who)
        .map_err(|message| syn::Error::new(system.span(), message))?;
    check_system(system, &loaded)?;
    Ok(lookup.track(&loaded.path).then(|| tracking(&loaded)))
}

/// `const _` of the settings file's and the crate's `Cargo.toml`'s bytes: stable Rust's
/// one way for a macro to make cargo track a file (rustc lists an included file in its
/// dep-info). `Cargo.toml` holds `[package.metadata.outbound-guard] settings`, which
/// says which file is read.
fn tracking(loaded: &Loaded) -> TokenStream {
    let Loaded { path, manifest, .. } = loaded;
    quote! {
        const _: (&[u8], &[u8]) = (::core::include_bytes!(#path), ::core::include_bytes!(#manifest));
    }
}

#[cfg(test)]
pub(crate) mod inline {
    //! Lookups for the expansion's unit tests: over a settings text, or the real rule
    //! from a crate directory other than this one.
    use super::*;

    /// The real rule, for the crate in this directory.
    pub(crate) struct At(pub PathBuf);

    impl Lookup for At {
        fn load(&self, who: &str) -> Result<Arc<Loaded>, String> {
            load_at(&self.0, who)
        }

        fn track(&self, path: &str) -> bool {
            ManifestDir.track(path)
        }
    }

    pub(crate) struct Inline(pub &'static str);

    impl Lookup for Inline {
        fn load(&self, _: &str) -> Result<Arc<Loaded>, String> {
            let shown = FILE_NAME.to_owned();
            let settings = Settings::parse(self.0, &shown).map_err(|e| e.to_string())?;
            Ok(Arc::new(Loaded {
                path: "/service/resilience.toml".to_owned(),
                shown,
                manifest: "/service/Cargo.toml".to_owned(),
                settings,
            }))
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
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_invalid_entry_names_the_file_relative_to_the_crate_and_the_key() {
        let dir = temp_dir("invalid");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, "[systems.sber]\ncb_failure_rate = 1.5\n").unwrap();
        let message = read(&path, FILE_NAME, "Cargo.toml").err().unwrap();
        assert!(message.starts_with("resilience.toml"), "{message}");
        assert!(
            message.contains("[systems.sber] `cb_failure_rate`"),
            "{message}"
        );
        assert!(message.contains("at most 1"), "{message}");
    }

    #[test]
    fn unparsable_toml_is_reported() {
        let dir = temp_dir("syntax");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, "[systems.sber\n").unwrap();
        let message = read(&path, FILE_NAME, "Cargo.toml").err().unwrap();
        assert!(message.contains("not valid TOML"), "{message}");
    }

    #[test]
    fn an_edited_file_is_read_again() {
        let dir = temp_dir("edited");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, "[systems.sber]\n").unwrap();
        let load = || load_cached(&path, FILE_NAME, "Cargo.toml");
        assert!(load().unwrap().settings.system("customer").is_none());
        std::fs::write(&path, "[systems.sber]\n[systems.customer]\n").unwrap();
        assert!(load().unwrap().settings.system("customer").is_some());
    }

    const WHO: &str = "`sber`, named by `#[guarded(system = …)]`, is checked against it";

    /// A workspace with a member crate, no settings anywhere yet.
    fn workspace(name: &str) -> (PathBuf, PathBuf) {
        let root = temp_dir(name);
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"svc\"]\n",
        )
        .unwrap();
        let member = root.join("svc");
        std::fs::create_dir_all(&member).unwrap();
        std::fs::write(member.join("Cargo.toml"), "[package]\nname = \"svc\"\n").unwrap();
        (root, member)
    }

    #[test]
    fn the_crate_file_comes_first_then_the_workspace_root() {
        let (root, member) = workspace("order");
        std::fs::write(root.join(FILE_NAME), "").unwrap();
        assert_eq!(find(&member, WHO).unwrap().path, root.join(FILE_NAME));
        assert_eq!(find(&member, WHO).unwrap().shown, "../resilience.toml");
        std::fs::write(member.join(FILE_NAME), "").unwrap();
        assert_eq!(find(&member, WHO).unwrap().path, member.join(FILE_NAME));
    }

    #[test]
    fn an_edited_manifest_is_read_again() {
        let (root, member) = workspace("manifest-edited");
        std::fs::write(root.join(FILE_NAME), "").unwrap();
        assert_eq!(find(&member, WHO).unwrap().path, root.join(FILE_NAME));
        // Found again from the cache, then from the edited `Cargo.toml`: its metadata
        // now names another file.
        assert_eq!(find(&member, WHO).unwrap().path, root.join(FILE_NAME));
        std::fs::create_dir_all(member.join("config")).unwrap();
        std::fs::write(member.join("config/cb.toml"), "").unwrap();
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"svc\"\n[package.metadata.outbound-guard]\nsettings = \"config/cb.toml\"\n",
        )
        .unwrap();
        assert_eq!(
            find(&member, WHO).unwrap().path,
            member.join("config/cb.toml")
        );
        // A workspace root that stops being one: the member is a crate of its own.
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"root\"\n").unwrap();
        std::fs::write(member.join("Cargo.toml"), "[package]\nname = \"svc\"\n").unwrap();
        assert!(find(&member, WHO).is_err());
    }

    #[test]
    fn a_file_named_in_the_metadata_is_the_only_candidate() {
        let (root, member) = workspace("metadata");
        std::fs::write(root.join(FILE_NAME), "").unwrap();
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"svc\"\n[package.metadata.outbound-guard]\nsettings = \"config/cb.toml\"\n",
        )
        .unwrap();
        let message = find(&member, WHO).unwrap_err();
        assert!(message.contains("`config/cb.toml`"), "{message}");
        std::fs::create_dir_all(member.join("config")).unwrap();
        std::fs::write(member.join("config/cb.toml"), "").unwrap();
        assert_eq!(
            find(&member, WHO).unwrap().path,
            member.join("config/cb.toml")
        );
    }

    #[test]
    fn the_compiled_in_file_is_named_relative_to_the_crate() {
        let (root, member) = workspace("compiled-in");
        std::fs::write(root.join(FILE_NAME), "").unwrap();
        let origin = compiled_in(&find(&member, WHO).unwrap().shown);
        assert_eq!(origin, "../resilience.toml (compiled in)");
    }

    #[test]
    fn a_file_elsewhere_in_the_workspace_is_named_with_the_key_that_uses_it() {
        let (root, member) = workspace("elsewhere");
        std::fs::create_dir_all(root.join("app/config")).unwrap();
        std::fs::write(root.join("app/config").join(FILE_NAME), "").unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("target/debug").join(FILE_NAME), "").unwrap();
        let message = find(&member, WHO).unwrap_err();
        assert!(message.contains(WHO), "{message}");
        assert!(
            message.contains(
                "the workspace has `../app/config/resilience.toml`: to use it, name it in this crate's Cargo.toml, `[package.metadata.outbound-guard] settings = \"../app/config/resilience.toml\"`"
            ),
            "{message}"
        );
        assert!(!message.contains("target/debug"), "{message}");
    }

    #[test]
    fn a_missing_file_named_by_the_key_says_to_fix_the_key() {
        let (_, member) = workspace("named-missing");
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"svc\"\n[package.metadata.outbound-guard]\nsettings = \"cb.toml\"\n",
        )
        .unwrap();
        let message = find(&member, WHO).unwrap_err();
        assert!(
            message.contains("fix the path in `[package.metadata.outbound-guard] settings`"),
            "{message}"
        );
    }

    #[test]
    fn no_file_names_every_file_tried_relative_to_the_crate() {
        let (_, member) = workspace("none");
        let message = find(&member, WHO).unwrap_err();
        assert!(
            message.contains("`resilience.toml`") && message.contains("`../resilience.toml`"),
            "{message}"
        );
        assert!(
            !message.contains(&*std::env::temp_dir().to_string_lossy()),
            "{message}"
        );
    }
}
