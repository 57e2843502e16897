//! The public surface of each library crate, as a snapshot in the tree (`tests/api/*.txt`),
//! so that every item added, removed or changed shows in the diff that makes it.
//!
//! rustdoc's JSON (nightly only) is read by the `public-api` crate, which lists every public
//! item a user can name, with its signature; each file starts with the two figures the
//! surface is budgeted by (see "Counting" below). With `--all-features`: what a user can meet.
//!
//! Needs a nightly toolchain whose rustdoc writes JSON format 57 (the `public-api` release
//! pinned in `Cargo.toml` reads that one). Where no nightly is installed, or one that writes
//! another format, the test says so and passes: the README's test command passes on a machine
//! with stable Rust alone, and on one whose nightly is newer (`public-api` is then bumped to
//! the release that reads its format). Where the nightly is the one it reads, every
//! difference fails the test.
//!
//! After a deliberate change: `BLESS=1 cargo test -p outbound-guard-tests --test public_api`
//! (or expect-test's own `UPDATE_EXPECT=1`).
//!
//! # Counting
//!
//! - *public items*: what is reachable from the crate root by public paths, each item once,
//!   modules and impl blocks left out, `#[doc(hidden)]` left out (rustdoc leaves it out), plus
//!   each item another crate defines that the root re-exports by name (`pub use
//!   outbound_guard_macros::adapter`): a user meets it at this crate's path; a whole crate
//!   re-exported (`pub mod settings { pub use outbound_guard_settings::*; }`) counts as every
//!   item that crate exposes, each once (one it also re-exports by name is not counted
//!   twice), not as one;
//! - *public inherent methods*: the public functions of inherent impl blocks of those types
//!   (trait impls, blanket and auto impls left out).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The published library crates.
const CRATES: [&str; 9] = [
    "outbound-guard",
    "outbound-guard-recording",
    "outbound-guard-recorder",
    "outbound-guard-replay",
    "outbound-guard-macros",
    "outbound-guard-settings",
    "outbound-guard-reqwest",
    "outbound-guard-tower",
    "outbound-guard-tonic",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The JSON format `public-api` (pinned in `Cargo.toml`) reads.
const FORMAT: u64 = 57;

/// Runs nightly rustdoc over every crate at once, writing JSON; `None` where no nightly is
/// installed.
fn rustdoc_json() -> Option<PathBuf> {
    let nightly = Command::new("cargo")
        .args(["+nightly", "--version"])
        .output();
    if !nightly.as_ref().is_ok_and(|out| out.status.success()) {
        eprintln!(
            "public API snapshots skipped: no nightly toolchain (`cargo +nightly` cannot run)"
        );
        return None;
    }
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("public-api");
    let mut command = Command::new("cargo");
    command
        .current_dir(workspace())
        .args(["+nightly", "doc", "--no-deps", "--all-features", "--quiet"])
        .args(CRATES.iter().flat_map(|name| ["-p", name]))
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTDOCFLAGS", "-Z unstable-options --output-format json");
    // What the outer cargo set for this test must not reach the nightly build.
    for variable in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTUP_TOOLCHAIN",
        "CARGO_BUILD_TARGET",
    ] {
        command.env_remove(variable);
    }
    let out = command.output().expect("cargo +nightly ran a moment ago");
    assert!(
        out.status.success(),
        "nightly rustdoc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(target.join("doc"))
}

/// The two figures of one crate's surface (see the module's docs).
#[derive(Debug, PartialEq)]
struct Surface {
    items: usize,
    methods: usize,
}

/// `krate`'s surface; `docs` is the directory of every crate's JSON, where a crate
/// re-exported whole is read.
fn surface(krate: &Value, docs: &Path) -> Surface {
    let index = &krate["index"];
    let get = |id: &Value| index.get(id.to_string());
    let mut modules = BTreeSet::new();
    let mut items = BTreeSet::new();
    let mut foreign = BTreeSet::new();
    // Crates re-exported whole: name → (items, the names at its root).
    let mut whole: std::collections::BTreeMap<String, (usize, BTreeSet<String>)> =
        std::collections::BTreeMap::new();
    let mut todo = vec![krate["root"].clone()];
    while let Some(id) = todo.pop() {
        let Some(item) = get(&id) else { continue };
        let inner = &item["inner"];
        if let Some(module) = inner.get("module") {
            if modules.insert(id.to_string()) {
                todo.extend(module["items"].as_array().into_iter().flatten().cloned());
            }
        } else if let Some(reexport) = inner.get("use") {
            match get(&reexport["id"]) {
                Some(target) if reexport["is_glob"] == true => {
                    if let Some(module) = target["inner"].get("module") {
                        todo.extend(module["items"].as_array().into_iter().flatten().cloned());
                    }
                }
                Some(_) => todo.push(reexport["id"].clone()),
                None if reexport["is_glob"] == true => {
                    let name = reexport["source"].as_str().unwrap_or_default().to_owned();
                    let text = std::fs::read_to_string(docs.join(format!("{name}.json")))
                        .unwrap_or_else(|e| panic!("{name} is re-exported whole, and its rustdoc JSON cannot be read: {e}"));
                    let other: Value = serde_json::from_str(&text).unwrap();
                    whole.insert(name, (surface(&other, docs).items, root_names(&other)));
                }
                None => {
                    foreign.insert(reexport["source"].as_str().unwrap_or_default().to_owned());
                }
            }
        } else if inner.get("impl").is_none() {
            items.insert(id.to_string());
        }
    }
    let mut methods = BTreeSet::new();
    for id in &items {
        let inner = &index[id]["inner"];
        let impls = ["struct", "enum", "union"]
            .iter()
            .find_map(|kind| inner.get(kind))
            .and_then(|definition| definition["impls"].as_array());
        for block in impls.into_iter().flatten().filter_map(&get) {
            let block = &block["inner"]["impl"];
            if !block["trait"].is_null()
                || block["is_synthetic"] == true
                || !block["blanket_impl"].is_null()
            {
                continue;
            }
            for method in block["items"].as_array().into_iter().flatten() {
                if get(method).is_some_and(|m| {
                    m["visibility"] == "public" && m["inner"].get("function").is_some()
                }) {
                    methods.insert(method.to_string());
                }
            }
        }
    }
    // A crate re-exported whole and by name: each of its items once.
    let named = foreign
        .iter()
        .filter(|source| {
            let (krate, name) = (
                source.split("::").next().unwrap_or_default(),
                source.rsplit("::").next().unwrap_or_default(),
            );
            !whole
                .get(krate)
                .is_some_and(|(_, names)| names.contains(name))
        })
        .count();
    Surface {
        items: items.len() + named + whole.values().map(|(n, _)| n).sum::<usize>(),
        methods: methods.len(),
    }
}

/// The names at a crate's root: its items' and its re-exports'.
fn root_names(krate: &Value) -> BTreeSet<String> {
    let index = &krate["index"];
    let root = &index[krate["root"].to_string()];
    root["inner"]["module"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|id| {
            let item = index.get(id.to_string())?;
            match item["inner"].get("use") {
                Some(reexport) => reexport["name"].as_str(),
                None => item["name"].as_str(),
            }
            .map(str::to_owned)
        })
        .collect()
}

/// The listing of one crate's JSON, headed by its figures; `None` for a format the pinned
/// `public-api` does not read.
fn listing(json: &Path) -> Option<String> {
    let krate: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let format = krate["format_version"].as_u64();
    if format != Some(FORMAT) {
        eprintln!(
            "public API snapshots skipped: this nightly writes rustdoc JSON format {format:?}, \
             the pinned public-api reads {FORMAT}"
        );
        return None;
    }
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .build()
        .unwrap_or_else(|error| panic!("{} cannot be read by public-api: {error}", json.display()));
    let Surface { items, methods } = surface(&krate, json.parent().unwrap());
    if json.ends_with("outbound_guard.json") {
        // The core's budget: a user meets it through one attribute, so what it offers
        // beyond that grows only on purpose. Set at 70 items (the settings crate it
        // re-exports whole counted by its own items) and 75 inherent methods.
        assert!(
            items <= 70 && methods <= 75,
            "the core has {items} public items and {methods} public inherent methods, over its \
             budget of 70 and 75: make the new ones private, or raise the budget on purpose"
        );
    }
    if json.ends_with("outbound_guard_replay.json") {
        // The replay's budget: a recording, the settings to try, each figure with how
        // sure it is, one setting against another and a search under objectives, in few
        // words. Set at 25 items and 60 inherent methods.
        assert!(
            items <= 25 && methods <= 60,
            "the replay crate has {items} public items and {methods} public inherent \
             methods, over its budget of 25 and 60: make the new ones private, or raise the \
             budget on purpose"
        );
    }
    let mut text = format!(
        "# {items} public items, {methods} public inherent methods (counted as tests/tests/public_api.rs says)\n"
    );
    for item in api.items() {
        text.push_str(&item.to_string());
        text.push('\n');
    }
    Some(text)
}

#[test]
fn each_library_crates_public_surface_is_its_snapshot() {
    let Some(doc) = rustdoc_json() else { return };
    for name in CRATES {
        let file = name.replace('-', "_");
        let Some(text) = listing(&doc.join(format!("{file}.json"))) else {
            return;
        };
        let snapshot = workspace().join("tests/api").join(format!("{name}.txt"));
        if std::env::var_os("BLESS").is_some() {
            std::fs::write(&snapshot, &text).unwrap();
        } else {
            expect_test::expect_file![snapshot].assert_eq(&text);
        }
    }
}
