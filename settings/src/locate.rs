//! Where a crate's settings file is: the rule the compile-time check and its messages
//! share, as a pure function over the crate's manifest.

use std::path::{Component, Path, PathBuf};

use crate::error::{ErrorKind, SettingsError};

/// The settings file's name, looked up next to the service crate's `Cargo.toml`.
pub const FILE_NAME: &str = "resilience.toml";

/// The variable [`build::track`](crate::build::track) sets for the crate's
/// compilation: the absolute path of the settings file the build script tracks. The
/// attribute leaves out its `include_bytes!` when it checks against that same file.
pub const TRACKED_ENV: &str = "OUTBOUND_GUARD_TRACKED_SETTINGS";

/// Why a file is a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    /// `[package.metadata.outbound-guard] settings = "…"` in the crate's `Cargo.toml`.
    Metadata,
    /// `resilience.toml` next to the crate's `Cargo.toml`.
    ManifestDir,
    /// `resilience.toml` at the workspace root, shared by the workspace's crates.
    WorkspaceRoot,
}

/// One place a crate's settings file may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The file's path: absolute when the manifest dir is.
    pub path: PathBuf,
    /// The file as the user would write it, relative to the crate's `Cargo.toml`
    /// (`resilience.toml`, `../resilience.toml`, or the metadata's value as written):
    /// what messages show, never the build machine's absolute path.
    pub shown: String,
    /// Why it is a candidate.
    pub kind: CandidateKind,
}

/// The files a crate's settings may be in, in the order they are tried; the first that
/// exists is the crate's settings file.
///
/// - When the crate's `Cargo.toml` (`manifest`, its text) says
///   `[package.metadata.outbound-guard] settings = "path"`, that file alone (relative to
///   `manifest_dir`): a crate that names its file never silently falls back to another.
/// - Otherwise `resilience.toml` next to the crate's `Cargo.toml`, then the workspace
///   root's `resilience.toml` (when `workspace_root` is given and is another
///   directory), so an adapters library and its binary share the service's one file.
///
/// Pure: reads no files. [`workspace_root`] finds the root on disk.
///
/// # Errors
///
/// When `manifest` is not valid TOML, or its `[package.metadata.outbound-guard]` is
/// not a table holding only a `settings` path.
///
/// ```
/// use std::path::Path;
/// use outbound_guard_settings::__private::{candidate_files, CandidateKind};
///
/// let manifest = "[package]\nname = \"adapters\"\n";
/// let found = candidate_files(Path::new("/svc/adapters"), manifest, Some(Path::new("/svc"))).unwrap();
/// let shown: Vec<&str> = found.iter().map(|c| c.shown.as_str()).collect();
/// assert_eq!(shown, ["resilience.toml", "../resilience.toml"]);
///
/// let manifest = "[package.metadata.outbound-guard]\nsettings = \"../service/resilience.toml\"\n";
/// let found = candidate_files(Path::new("/svc/adapters"), manifest, Some(Path::new("/svc"))).unwrap();
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].kind, CandidateKind::Metadata);
/// assert_eq!(found[0].path, Path::new("/svc/adapters/../service/resilience.toml"));
/// ```
pub fn candidate_files(
    manifest_dir: &Path,
    manifest: &str,
    workspace_root: Option<&Path>,
) -> Result<Vec<Candidate>, SettingsError> {
    if let Some(named) = metadata_settings(manifest)? {
        return Ok(vec![Candidate {
            path: manifest_dir.join(&named),
            shown: named,
            kind: CandidateKind::Metadata,
        }]);
    }
    let mut candidates = vec![Candidate {
        path: manifest_dir.join(FILE_NAME),
        shown: FILE_NAME.to_owned(),
        kind: CandidateKind::ManifestDir,
    }];
    if let Some(root) = workspace_root.filter(|root| *root != manifest_dir) {
        candidates.push(Candidate {
            path: root.join(FILE_NAME),
            shown: relative(manifest_dir, root).map_or_else(
                || root.join(FILE_NAME).display().to_string(),
                |up| format!("{up}{FILE_NAME}"),
            ),
            kind: CandidateKind::WorkspaceRoot,
        });
    }
    Ok(candidates)
}

/// The candidates as a message lists them: `` `resilience.toml` (next to this crate's
/// Cargo.toml), `../resilience.toml` (the workspace root's) ``.
pub fn tried(candidates: &[Candidate]) -> String {
    let parts: Vec<String> = candidates
        .iter()
        .map(|c| {
            let why = match c.kind {
                CandidateKind::Metadata => "named by `[package.metadata.outbound-guard] settings`",
                CandidateKind::ManifestDir => "next to this crate's Cargo.toml",
                CandidateKind::WorkspaceRoot => "the workspace root's",
            };
            format!("`{}` ({why})", c.shown)
        })
        .collect();
    parts.join(", ")
}

/// [`candidate_files`] of the crate at `manifest_dir`, as it is on disk: reads its
/// `Cargo.toml` (a missing one reads as empty) and finds its [`workspace_root`]. The
/// first of them that exists is the crate's settings file.
///
/// # Errors
///
/// The crate's `Cargo.toml` is not valid TOML, or its
/// `[package.metadata.outbound-guard]` is malformed.
pub fn crate_candidates(manifest_dir: &Path) -> Result<Vec<Candidate>, SettingsError> {
    let manifest = std::fs::read_to_string(manifest_dir.join("Cargo.toml")).unwrap_or_default();
    candidate_files(
        manifest_dir,
        &manifest,
        workspace_root(manifest_dir).as_deref(),
    )
}

/// The workspace root of the crate at `manifest_dir`: the nearest directory above it
/// (or itself) whose `Cargo.toml` has a `[workspace]` table. Reads those files.
pub fn workspace_root(manifest_dir: &Path) -> Option<PathBuf> {
    manifest_dir.ancestors().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        let table: toml::Table = toml::from_str(&text).ok()?;
        table.contains_key("workspace").then(|| dir.to_path_buf())
    })
}

/// `[package.metadata.outbound-guard] settings`, if the manifest sets it.
fn metadata_settings(manifest: &str) -> Result<Option<String>, SettingsError> {
    let error = |message: String| SettingsError::new(ErrorKind::Syntax, "Cargo.toml", message);
    let table: toml::Table = toml::from_str(manifest)
        .map_err(|e| error(format!("not valid TOML: {}", e.to_string().trim_end())))?;
    let Some(ours) = table
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("outbound-guard"))
    else {
        return Ok(None);
    };
    let Some(ours) = ours.as_table() else {
        return Err(error(
            "`package.metadata.outbound-guard` must be a table, written `[package.metadata.outbound-guard]`".into(),
        ));
    };
    if let Some(other) = ours.keys().find(|k| *k != "settings") {
        return Err(error(format!(
            "unknown key `{other}` in `[package.metadata.outbound-guard]`; the only key is `settings`, the path of the service's {FILE_NAME} relative to this Cargo.toml"
        )));
    }
    match ours.get("settings") {
        None => Ok(None),
        Some(toml::Value::String(path)) if !path.trim().is_empty() => Ok(Some(path.clone())),
        Some(_) => Err(error(format!(
            "`[package.metadata.outbound-guard] settings` must be a path string relative to this Cargo.toml, such as \"../{FILE_NAME}\""
        ))),
    }
}

/// `../../` from `from` up to its ancestor `to`, if `to` is one.
fn relative(from: &Path, to: &Path) -> Option<String> {
    let rest = from.strip_prefix(to).ok()?;
    let ups = rest
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    Some("../".repeat(ups))
}
