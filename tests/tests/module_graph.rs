//! Every crate of the workspace imports its own modules without a circle.
//!
//! The crates are found, not listed: every member of the workspace's `Cargo.toml` (a
//! member `dir/*` is each package in `dir`), and in each its library (`src/lib.rs` or
//! `[lib] path`) and binaries (`src/main.rs`, `src/bin/*.rs`, `[[bin]] path`). A crate
//! added to `members` is checked with no edit here. Two kinds of code are not read:
//!
//! - the members under `examples/` ([`SKIPPED`]): demos of using the library, written as
//!   a service would be; the rule is the library's house rule, not one a user's service
//!   must follow;
//! - each member's `tests/`, `benches/` and `examples/` directories: each file there is
//!   a crate of its own that reaches the library only through its public API.
//!
//! Each crate's modules are read from its root's `mod` declarations, as the compiler
//! reads them (`#[path = "…"]` included; a file declared twice is both modules, and two
//! files declared as one module under opposite `cfg`s are that module). Every
//! `crate::…`, `super::…` and `self::…` path in a module's code (outside comments and
//! string literals), and every path through one of its own child modules (`child::…`),
//! is an edge from the module to the deepest module the path names. Then:
//!
//! - the graph has no circle;
//! - no module imports from one of its ancestors (a child is a part of its parent and
//!   must not lean on it back); for the root, `lib.rs` or `main.rs`, this means nothing
//!   is imported from the root: siblings import siblings by their module path. A module
//!   compiled only for the tests (declared under `#[cfg(test)]` or `#[cfg(all(test, …))]`,
//!   or inside one) exists to test its parent and may import it;
//! - every `.rs` file under a crate's source directory is one of its modules (a file no
//!   `mod` declares would go unchecked);
//! - no two parts of a crate lean on each other: the imports between sibling modules,
//!   each standing for everything under it, make no circle either;
//! - one module-file style: a module with children is `name.rs` beside `name/`, never
//!   `name/mod.rs`.
//!
//! `MODULE_GRAPH_ROOT=/path/to/workspace cargo test -p outbound-guard-tests --test
//! module_graph` checks another checkout; `MODULE_GRAPH_SRC=/path/to/crate/src` checks
//! one crate's source directory alone (examples included).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The root module, `lib.rs` or `main.rs`.
const ROOT: &str = "crate";

/// Workspace directories whose members are not checked: the demos.
const SKIPPED: &[&str] = &["examples"];

/// One crate: a package's library or one of its binaries.
struct Crate {
    /// The package's name and the target: `outbound-guard-settings (lib)`.
    name: String,
    /// The crate root, `src/lib.rs` or `src/main.rs`.
    root: PathBuf,
}

/// A package's crates, and the directory whose `.rs` files they must declare.
struct Package {
    crates: Vec<Crate>,
    source_dir: PathBuf,
}

/// Where an edge comes from: a file, a line, and the path written there.
#[derive(Clone, Debug)]
struct Site {
    file: PathBuf,
    line: usize,
    path: String,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} `{}`", self.file.display(), self.line, self.path)
    }
}

/// One crate's modules and the edges between them.
#[derive(Default)]
struct Graph {
    /// Module → the files it is read from.
    files: BTreeMap<String, BTreeSet<PathBuf>>,
    /// Modules compiled only for the tests.
    tests: BTreeSet<String>,
    /// (from, to) → the places that make the edge.
    edges: BTreeMap<(String, String), Vec<Site>>,
}

// ---------------------------------------------------------------------------------------
// Finding the crates

fn workspace_root() -> PathBuf {
    if let Some(root) = std::env::var_os("MODULE_GRAPH_ROOT") {
        return PathBuf::from(root);
    }
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let manifest = dir.join("Cargo.toml");
        if std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("[workspace]")) {
            return dir;
        }
        assert!(dir.pop(), "no workspace Cargo.toml above the tests package");
    }
}

fn manifest(dir: &Path) -> toml::Table {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// The workspace's member directories; a member `dir/*` is every directory in `dir`.
fn members(root: &Path) -> Vec<PathBuf> {
    let workspace = manifest(root);
    let listed = workspace["workspace"]["members"]
        .as_array()
        .expect("workspace.members is a list");
    let mut out = Vec::new();
    for member in listed {
        let member = member.as_str().expect("a member is a path");
        if let Some(parent) = member.strip_suffix("/*") {
            let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(parent))
                .expect("a member glob names a directory")
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.join("Cargo.toml").is_file())
                .collect();
            dirs.sort();
            out.extend(dirs);
        } else {
            out.push(root.join(member));
        }
    }
    out
}

/// A member's library and binaries, as Cargo finds them.
fn package(dir: &Path) -> Package {
    let manifest = manifest(dir);
    let name = manifest["package"]["name"]
        .as_str()
        .expect("package.name")
        .to_owned();
    let path_of = |target: &toml::Value| {
        target
            .get("path")
            .and_then(|p| p.as_str())
            .map(|p| dir.join(p))
    };
    let mut crates = Vec::new();
    let lib = manifest
        .get("lib")
        .and_then(path_of)
        .unwrap_or_else(|| dir.join("src/lib.rs"));
    if lib.is_file() {
        crates.push(Crate {
            name: format!("{name} (lib)"),
            root: lib,
        });
    }
    let mut bins: BTreeSet<PathBuf> = manifest
        .get("bin")
        .and_then(|b| b.as_array())
        .into_iter()
        .flatten()
        .filter_map(path_of)
        .collect();
    let main = dir.join("src/main.rs");
    if main.is_file() {
        bins.insert(main);
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("src/bin")) {
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "rs") {
                bins.insert(path);
            } else if path.join("main.rs").is_file() {
                bins.insert(path.join("main.rs"));
            }
        }
    }
    for bin in bins {
        crates.push(Crate {
            name: format!(
                "{name} (bin {})",
                bin.strip_prefix(dir).unwrap_or(&bin).display()
            ),
            root: bin,
        });
    }
    Package {
        crates,
        source_dir: dir.join("src"),
    }
}

fn packages() -> Vec<Package> {
    if let Some(src) = std::env::var_os("MODULE_GRAPH_SRC") {
        let src = PathBuf::from(src);
        let crates = ["lib.rs", "main.rs"]
            .iter()
            .map(|f| src.join(f))
            .filter(|f| f.is_file())
            .map(|root| Crate {
                name: src.display().to_string(),
                root,
            })
            .collect();
        return vec![Package {
            crates,
            source_dir: src,
        }];
    }
    let root = workspace_root();
    members(&root)
        .iter()
        .filter(|dir| {
            let relative = dir.strip_prefix(&root).unwrap_or(dir);
            !SKIPPED.iter().any(|skipped| relative.starts_with(skipped))
        })
        .map(|dir| package(dir))
        .filter(|p| !p.crates.is_empty())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading a file

/// A file's text twice, byte for byte aligned with it: `code` without comments, `bare`
/// without comments and without the contents of string and character literals (each
/// byte blanked to a space; line breaks kept, so that offsets and lines stay).
struct Text {
    code: Vec<u8>,
    bare: Vec<u8>,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn strip(text: &str) -> Text {
    let src = text.as_bytes();
    let mut code = src.to_vec();
    let mut bare = src.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < src.len() {
        let rest = &src[i..];
        let after_ident = i > 0 && is_ident(src[i - 1]);
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(src.len(), |n| i + n);
            blank(&mut code, i, end);
            blank(&mut bare, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < src.len() {
                if src[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if src[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut code, i, j);
            blank(&mut bare, i, j);
            i = j;
        } else if !after_ident && raw_string_start(rest).is_some() {
            let (prefix, hashes) = raw_string_start(rest).expect("checked");
            let body = i + prefix;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = src[body..]
                .windows(close.len())
                .position(|w| w == close)
                .map_or(src.len(), |n| body + n + close.len());
            blank(&mut bare, i, end);
            i = end;
        } else if src[i] == b'"' {
            let mut j = i + 1;
            while j < src.len() && src[j] != b'"' {
                j += if src[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(src.len());
            blank(&mut bare, i, end);
            i = end;
        } else if src[i] == b'\'' {
            // A character literal, or a lifetime or label (`'a`, `'static`), left as is.
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..]
                    .iter()
                    .position(|&b| b == b'\'')
                    .map(|n| i + 2 + n + 1)
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + width) == Some(&b'\'')).then_some(i + 2 + width)
            };
            match end {
                Some(end) => {
                    blank(&mut bare, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    Text { code, bare }
}

/// `r"`, `r#"`, `br##"`…: the length of the opening and the number of `#`.
fn raw_string_start(text: &[u8]) -> Option<(usize, usize)> {
    let after_b = text.strip_prefix(b"b").unwrap_or(text);
    let after_r = after_b.strip_prefix(b"r")?;
    let hashes = after_r.iter().take_while(|&&b| b == b'#').count();
    (after_r.get(hashes) == Some(&b'"'))
        .then_some((text.len() - after_r.len() + hashes + 1, hashes))
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn ident_at(text: &[u8], i: usize) -> &str {
    let len = text[i..].iter().take_while(|&&b| is_ident(b)).count();
    std::str::from_utf8(&text[i..i + len]).expect("identifiers are ASCII here")
}

/// Every path in the `{…}` group or plain path at the start of `text`, as segments; a
/// group `{a::X, b::{Y, Z}}` gives one path per item. Returns how far it read.
fn group(text: &[u8], stem: &mut Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut i = skip_space(text, 0);
    if text.get(i) == Some(&b'{') {
        i += 1;
        loop {
            i += group(&text[i..], stem, out);
            i = skip_space(text, i);
            match text.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => return i + 1,
                _ => return i,
            }
            i = skip_space(text, i);
            if text.get(i) == Some(&b'}') {
                return i + 1;
            }
        }
    }
    let ident = ident_at(text, i);
    if ident.is_empty() {
        // `crate::*`, or the end of a group.
        if !stem.is_empty() {
            out.push(stem.clone());
        }
        return i;
    }
    stem.push(ident.to_owned());
    i += ident.len();
    let consumed = if text[i..].starts_with(b"::") {
        i + 2 + group(&text[i + 2..], stem, out)
    } else {
        out.push(stem.clone());
        i
    };
    stem.pop();
    consumed
}

/// Every place `word::` starts a path in `bare` (not `$crate::`, not `a::word::`, not
/// `xword::`), with the paths that follow it.
fn paths_after(bare: &[u8], word: &str) -> Vec<(usize, Vec<Vec<String>>)> {
    let needle = format!("{word}::");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(n) = bare[from..]
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
    {
        let at = from + n;
        from = at + needle.len();
        let before = at.checked_sub(1).map(|b| bare[b]);
        if before.is_some_and(|c| c == b'$' || c == b':' || is_ident(c)) {
            continue;
        }
        let mut paths = Vec::new();
        group(&bare[from..], &mut Vec::new(), &mut paths);
        out.push((at, paths));
    }
    out
}

/// A `mod` declaration found in a file.
struct ModDecl {
    name: String,
    /// The inline modules it sits in, outermost first.
    inline: Vec<String>,
    /// `#[path = "…"]`.
    path: Option<String>,
    /// Declared under `#[cfg(test)]`.
    test: bool,
    /// `mod name;` (a file) rather than `mod name { … }`.
    file: bool,
}

/// The file's `mod` declarations, and for each byte the inline modules it sits in.
fn declarations(text: &Text) -> (Vec<ModDecl>, Vec<(usize, Vec<String>)>) {
    let bare = &text.bare;
    let mut decls = Vec::new();
    // Inline-module changes: from this offset on, these inline modules.
    let mut scopes = vec![(0, Vec::new())];
    // Each open brace: the inline module it opens, if it does.
    let mut braces: Vec<Option<String>> = Vec::new();
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < bare.len() {
        let b = bare[i];
        if b == b'{' {
            braces.push(pending.take());
            if braces.last().is_some_and(Option::is_some) {
                scopes.push((i, braces.iter().flatten().cloned().collect()));
            }
            i += 1;
        } else if b == b'}' {
            if braces.pop().flatten().is_some() {
                scopes.push((i, braces.iter().flatten().cloned().collect()));
            }
            i += 1;
        } else if is_ident(b) {
            let word = ident_at(bare, i);
            let start = i;
            i += word.len();
            if word != "mod" || (start > 0 && bare[start - 1] == b'$') {
                continue;
            }
            let at = skip_space(bare, i);
            let name = ident_at(bare, at);
            let end = skip_space(bare, at + name.len());
            if name.is_empty() || !matches!(bare.get(end), Some(b';' | b'{')) {
                continue;
            }
            // The attributes: back to the end of the previous item.
            let from = bare[..start]
                .iter()
                .rposition(|&c| matches!(c, b';' | b'{' | b'}'))
                .map_or(0, |p| p + 1);
            let attributes = String::from_utf8_lossy(&text.code[from..start]);
            let squeezed: String = attributes.split_whitespace().collect();
            let path = squeezed
                .find("#[path=\"")
                .map(|p| &squeezed[p + 8..])
                .and_then(|rest| rest.split('"').next())
                .map(str::to_owned);
            decls.push(ModDecl {
                name: name.to_owned(),
                inline: braces.iter().flatten().cloned().collect(),
                path,
                test: test_only(&squeezed),
                file: bare[end] == b';',
            });
            if bare[end] == b'{' {
                pending = Some(name.to_owned());
            }
            i = end;
        } else {
            i += 1;
        }
    }
    (decls, scopes)
}

/// Whether attributes (whitespace removed) hold a `cfg` true only in the tests: `test`,
/// or `all(…, test, …)`.
fn test_only(attributes: &str) -> bool {
    attributes.split("#[cfg(").skip(1).any(|rest| {
        let mut depth = 1;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(rest.len(), |(i, _)| i);
        let predicate = &rest[..end];
        predicate == "test"
            || predicate
                .strip_prefix("all(")
                .and_then(|p| p.strip_suffix(')'))
                .is_some_and(|all| all.split(',').any(|p| p == "test"))
    })
}

fn inline_at(scopes: &[(usize, Vec<String>)], offset: usize) -> &[String] {
    scopes
        .iter()
        .rev()
        .find(|(from, _)| *from <= offset)
        .map_or(&[], |(_, inline)| inline.as_slice())
}

fn segments(module: &str) -> Vec<String> {
    if module == ROOT {
        Vec::new()
    } else {
        module.split("::").map(str::to_owned).collect()
    }
}

fn module_name(segments: &[String]) -> String {
    if segments.is_empty() {
        ROOT.to_owned()
    } else {
        segments.join("::")
    }
}

fn parent(module: &str) -> Option<String> {
    match module.rsplit_once("::") {
        Some((parent, _)) => Some(parent.to_owned()),
        None if module == ROOT => None,
        None => Some(ROOT.to_owned()),
    }
}

/// The deepest known module that `path` (segments from the crate root) names.
fn resolve(path: &[String], modules: &BTreeSet<String>) -> String {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
        .unwrap_or_else(|| ROOT.to_owned())
}

// ---------------------------------------------------------------------------------------
// Building a crate's graph

/// One module's file as read: its module, the file, and the file's text.
struct Loaded {
    module: String,
    /// Compiled only for the tests.
    test: bool,
    file: PathBuf,
    text: Text,
    decls: Vec<ModDecl>,
    scopes: Vec<(usize, Vec<String>)>,
}

/// Reads the crate's modules from its root's `mod` declarations on.
fn load(root: &Path) -> Vec<Loaded> {
    let mut loaded: Vec<Loaded> = Vec::new();
    // (module, file, whether its children live beside it (`mod.rs`-like), test)
    let mut queue = vec![(ROOT.to_owned(), root.to_owned(), true, false)];
    while let Some((module, file, mod_rs, test)) = queue.pop() {
        if loaded.iter().any(|l| l.module == module && l.file == file) {
            continue;
        }
        let source = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let text = strip(&source);
        let (decls, scopes) = declarations(&text);
        let dir = file.parent().expect("a file has a directory").to_owned();
        let children_dir = if mod_rs {
            dir.clone()
        } else {
            dir.join(file.file_stem().expect("a file name"))
        };
        for decl in decls.iter().filter(|d| d.file) {
            let child: Vec<String> = segments(&module)
                .into_iter()
                .chain(decl.inline.iter().cloned())
                .chain([decl.name.clone()])
                .collect();
            let within = decl
                .inline
                .iter()
                .fold(children_dir.clone(), |d, m| d.join(m));
            let (child_file, child_mod_rs) = match &decl.path {
                Some(path) if decl.inline.is_empty() => (dir.join(path), true),
                Some(path) => (within.join(path), true),
                None => {
                    let flat = within.join(format!("{}.rs", decl.name));
                    if flat.is_file() {
                        (flat, false)
                    } else {
                        (within.join(&decl.name).join("mod.rs"), true)
                    }
                }
            };
            queue.push((
                module_name(&child),
                child_file,
                child_mod_rs,
                test || decl.test,
            ));
        }
        loaded.push(Loaded {
            module,
            test,
            file,
            text,
            decls,
            scopes,
        });
    }
    loaded
}

// `bytecount` would be a dependency for one count over a source file, in a test.
#[allow(clippy::naive_bytecount)]
fn line_of(bytes: &[u8], offset: usize) -> usize {
    bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1
}

fn graph(root: &Path, workspace: &Path) -> Graph {
    let loaded = load(root);
    let mut graph = Graph::default();
    for l in &loaded {
        if l.test {
            graph.tests.insert(l.module.clone());
        }
        let shown = l.file.strip_prefix(workspace).unwrap_or(&l.file).to_owned();
        graph
            .files
            .entry(l.module.clone())
            .or_default()
            .insert(shown);
    }
    let names: BTreeSet<String> = graph.files.keys().cloned().collect();
    for l in &loaded {
        let module = l.module.clone();
        let file = l.file.strip_prefix(workspace).unwrap_or(&l.file).to_owned();
        let here = segments(&module);
        let mut found: Vec<(usize, String, Vec<String>)> = Vec::new();
        for (at, paths) in paths_after(&l.text.bare, "crate") {
            for path in paths {
                found.push((at, format!("crate::{}", path.join("::")), path));
            }
        }
        for word in ["super", "self"] {
            for (at, paths) in paths_after(&l.text.bare, word) {
                let mut base: Vec<String> = here
                    .iter()
                    .chain(inline_at(&l.scopes, at))
                    .cloned()
                    .collect();
                if word == "super" {
                    base.pop();
                }
                for path in paths {
                    let written = format!("{word}::{}", path.join("::"));
                    let mut rest = path.as_slice();
                    while let Some(("super", tail)) =
                        rest.split_first().map(|(h, t)| (h.as_str(), t))
                    {
                        base.pop();
                        rest = tail;
                    }
                    let full = base.iter().chain(rest).cloned().collect();
                    found.push((at, written, full));
                }
            }
        }
        // Paths through the module's own children, written without `self::`.
        for decl in l.decls.iter().filter(|d| d.file && d.inline.is_empty()) {
            for (at, paths) in paths_after(&l.text.bare, &decl.name) {
                if !inline_at(&l.scopes, at).is_empty() {
                    continue;
                }
                for path in paths {
                    let written = format!("{}::{}", decl.name, path.join("::"));
                    let full = here
                        .iter()
                        .chain([&decl.name])
                        .chain(&path)
                        .cloned()
                        .collect();
                    found.push((at, written, full));
                }
            }
        }
        for (at, written, full) in found {
            let target = resolve(&full, &names);
            if target == module {
                continue;
            }
            graph
                .edges
                .entry((module.clone(), target))
                .or_default()
                .push(Site {
                    file: file.clone(),
                    line: line_of(&l.text.bare, at),
                    path: written,
                });
        }
    }
    graph
}

// ---------------------------------------------------------------------------------------
// The rules

/// The strongly connected components of more than one module: every circle's modules.
fn circles(edges: &BTreeMap<(String, String), Vec<Site>>) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
        next.entry(to).or_default();
    }
    let reaches = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &n in &next[node] {
                if seen.insert(n.to_owned()) {
                    stack.push(n);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<String>> = next.keys().map(|&n| (n, reaches(n))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (&node, from_node) in &reach {
        if !from_node.contains(node) || out.iter().any(|c| c.contains(node)) {
            continue;
        }
        let component = from_node
            .iter()
            .filter(|other| reach[other.as_str()].contains(node))
            .cloned()
            .collect();
        out.push(component);
    }
    out
}

/// The imports between sibling modules, each module standing for everything under it:
/// an import from `a::x` of `b::y` is an edge `a` → `b`. A parent's imports of its own
/// descendants, and the ones the tests make, are not among them. A circle here is two
/// parts of the crate leaning on each other, even when no two single modules do.
fn sibling_edges(graph: &Graph) -> BTreeMap<(String, String), Vec<Site>> {
    let mut out: BTreeMap<(String, String), Vec<Site>> = BTreeMap::new();
    for ((from, to), sites) in &graph.edges {
        if graph.tests.contains(from) {
            continue;
        }
        let (f, t) = (segments(from), segments(to));
        let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
        // One inside the other: a parent and its part, or the ancestor rule's concern.
        if common == f.len() || common == t.len() {
            continue;
        }
        let key = (module_name(&f[..=common]), module_name(&t[..=common]));
        out.entry(key).or_default().extend(sites.iter().cloned());
    }
    out
}

/// What breaks the rules in one crate, one line each.
fn violations(graph: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    let is_test = |m: &str| graph.tests.contains(m);
    for ((from, to), sites) in &graph.edges {
        if is_test(from) {
            continue;
        }
        let mut up = parent(from);
        while let Some(ancestor) = up {
            if &ancestor == to {
                let what = if to == ROOT {
                    "imports from the crate root (an item of lib.rs/main.rs: import it from the module that defines it)".to_owned()
                } else {
                    format!("imports from its ancestor `{to}`")
                };
                for site in sites {
                    out.push(format!("`{from}` {what}: {site}"));
                }
            }
            up = parent(&ancestor);
        }
    }
    for circle in circles(&graph.edges) {
        let mut text = format!(
            "a circle of modules {{{}}}; the imports between them:",
            circle.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        for ((from, to), sites) in &graph.edges {
            if circle.contains(from) && circle.contains(to) {
                let _ = write!(text, "\n      `{from}` → `{to}`:");
                for site in sites {
                    let _ = write!(text, " {site};");
                }
            }
        }
        out.push(text);
    }
    let siblings = sibling_edges(graph);
    for circle in circles(&siblings) {
        // A circle of single modules is reported above, whole.
        if circles(&graph.edges).iter().any(|c| c.is_superset(&circle)) {
            continue;
        }
        let mut text = format!(
            "a circle of sibling modules {{{}}}, counting what is under each; the imports between them:",
            circle.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        for ((from, to), sites) in &siblings {
            if circle.contains(from) && circle.contains(to) {
                let _ = write!(text, "\n      `{from}` → `{to}`:");
                for site in sites {
                    let _ = write!(text, " {site};");
                }
            }
        }
        out.push(text);
    }
    out
}

/// Checks one package's crates, and that they declare every file of its source directory.
/// Adds a line per crate to `checked` and returns what breaks the rules.
fn check_package(package: &Package, workspace: &Path, checked: &mut Vec<String>) -> Vec<String> {
    let mut failures = Vec::new();
    let mut declared = BTreeSet::new();
    for krate in &package.crates {
        let graph = graph(&krate.root, workspace);
        for files in graph.files.values() {
            declared.extend(files.iter().map(|f| workspace.join(f)));
        }
        checked.push(format!("{} ({} modules)", krate.name, graph.files.len()));
        for violation in violations(&graph) {
            failures.push(format!("{}: {violation}", krate.name));
        }
    }
    let mut files = Vec::new();
    rust_files(&package.source_dir, &mut files);
    files.sort();
    // One module-file style: a module with children is `name.rs` beside `name/`.
    for file in files.iter().filter(|f| f.ends_with("mod.rs")) {
        let shown = file.strip_prefix(workspace).unwrap_or(file);
        failures.push(format!(
            "{}: {} is a `mod.rs`: this workspace writes a module as `name.rs`, beside its folder `name/` when it has children",
            package.crates[0].name,
            shown.display()
        ));
    }
    for file in files {
        if !declared.contains(&file) {
            let shown = file.strip_prefix(workspace).unwrap_or(&file);
            failures.push(format!(
                "{}: {} is a module of none of its crates (no `mod` declares it)",
                package.crates[0].name,
                shown.display()
            ));
        }
    }
    failures
}

#[test]
fn every_crate_imports_its_modules_without_a_circle_and_nothing_from_an_ancestor() {
    let workspace = if std::env::var_os("MODULE_GRAPH_SRC").is_some() {
        PathBuf::new()
    } else {
        workspace_root()
    };
    let mut checked = Vec::new();
    let failures: Vec<String> = packages()
        .iter()
        .flat_map(|p| check_package(p, &workspace, &mut checked))
        .collect();
    if std::env::var_os("MODULE_GRAPH_SRC").is_none()
        && std::env::var_os("MODULE_GRAPH_ROOT").is_none()
    {
        for crate_ in [
            "outbound-guard (lib)",
            "outbound-guard-settings (lib)",
            "outbound-guard-macros (lib)",
            "outbound-guard-cli (bin src/main.rs)",
        ] {
            assert!(
                checked.iter().any(|c| c.starts_with(crate_)),
                "{crate_} was not found among the workspace's crates: {checked:#?}"
            );
        }
    }
    assert!(
        failures.is_empty(),
        "crates checked: {checked:#?}\n{} break the import rule (no circle; no import from an ancestor; nothing from lib.rs/main.rs):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------
// The checker's own tests

#[test]
fn the_parser_reads_grouped_and_nested_paths_outside_comments_and_strings() {
    let text = strip(
        "use crate::{a::X, b::{c::Y, Z}};\n// crate::no::Comment\nlet x = $crate::q::R; \
         crate::d::f(1); \"crate::no::String\"; r#\"crate::no::\"Raw\"#; '\"'; \
         /* crate::no /* nested */ block */ let y: &'static str = e::crate::g;",
    );
    let found: Vec<String> = paths_after(&text.bare, "crate")
        .into_iter()
        .flat_map(|(_, paths)| paths)
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(found, ["a::X", "b::c::Y", "b::Z", "d::f"]);
    let modules: BTreeSet<String> = ["a", "b", "b::c"].map(str::to_owned).into();
    assert_eq!(
        resolve(&["b".into(), "c".into(), "Y".into()], &modules),
        "b::c"
    );
    assert_eq!(resolve(&["Guard".into()], &modules), ROOT);
}

#[test]
fn the_checker_finds_a_circle_and_only_its_modules() {
    let mut edges: BTreeMap<(String, String), Vec<Site>> = BTreeMap::new();
    for (from, to) in [
        ("guard", "call"),
        ("call", "options"),
        ("options", "guard"),
        ("guard", "error"),
    ] {
        edges.insert((from.into(), to.into()), Vec::new());
    }
    let expected: BTreeSet<String> = ["call", "guard", "options"].map(str::to_owned).into();
    assert_eq!(circles(&edges), [expected]);
}

/// A crate written to a temporary directory: `#[path]` and `#[cfg(test)]` are read, and a
/// circle, an import from the root and from a parent, and an undeclared file are found,
/// each with its file and line.
#[test]
fn the_checker_reads_a_crate_from_its_declarations() {
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = [
        (
            "lib.rs",
            "mod a;\nmod b;\n#[path = \"elsewhere/hidden.rs\"]\nmod shown;\n#[cfg(test)]\nmod tests;\npub use a::A;\npub struct Root;\n",
        ),
        ("a.rs", "mod inner;\npub struct A;\nfn f() { b::g() }\nmod b { pub fn g() { crate::b::h() } }\n"),
        ("a/inner.rs", "use super::A;\n"),
        ("b.rs", "pub fn h() { super::a::A; }\n"),
        ("elsewhere/hidden.rs", "use crate::Root;\n"),
        ("tests.rs", "use crate::Root;\n"),
        ("orphan.rs", "\n"),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = graph(&dir.join("lib.rs"), &dir);
    let modules: Vec<&String> = graph.files.keys().collect();
    assert_eq!(modules, ["a", "a::inner", "b", "crate", "shown", "tests"]);
    assert_eq!(
        graph.files["shown"],
        BTreeSet::from([PathBuf::from("elsewhere/hidden.rs")])
    );
    assert!(graph.tests.contains("tests"));
    let package = Package {
        crates: vec![Crate {
            name: "fixture (lib)".into(),
            root: dir.join("lib.rs"),
        }],
        source_dir: dir.clone(),
    };
    let mut checked = Vec::new();
    let found = check_package(&package, &dir, &mut checked);
    assert_eq!(checked, ["fixture (lib) (6 modules)"]);
    assert_eq!(
        found,
        [
            "fixture (lib): `a::inner` imports from its ancestor `a`: a/inner.rs:1 `super::A`",
            "fixture (lib): `shown` imports from the crate root (an item of lib.rs/main.rs: import it from the module that defines it): elsewhere/hidden.rs:1 `crate::Root`",
            "fixture (lib): a circle of modules {a, b}; the imports between them:\n      `a` → `b`: a.rs:4 `crate::b::h`;\n      `b` → `a`: b.rs:1 `super::a::A`;",
            "fixture (lib): orphan.rs is a module of none of its crates (no `mod` declares it)",
        ],
        "{found:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two parts of a crate that lean on each other through their children, with no circle
/// of single modules, are found as a circle of siblings; and a `mod.rs` is refused.
#[test]
fn the_checker_finds_siblings_leaning_on_each_other_and_a_mod_rs() {
    let dir = std::env::temp_dir().join(format!("module-graph-siblings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = [
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "mod inner;\npub struct A;\n"),
        ("a/inner.rs", "fn f() { crate::b::g() }\n"),
        ("b/mod.rs", "pub fn g() {}\nfn h(_: crate::a::A) {}\n"),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let package = Package {
        crates: vec![Crate {
            name: "fixture (lib)".into(),
            root: dir.join("lib.rs"),
        }],
        source_dir: dir.clone(),
    };
    let found = check_package(&package, &dir, &mut Vec::new());
    assert_eq!(
        found,
        [
            "fixture (lib): a circle of sibling modules {a, b}, counting what is under each; the imports between them:\n      `a` → `b`: a/inner.rs:1 `crate::b::g`;\n      `b` → `a`: b/mod.rs:2 `crate::a::A`;",
            "fixture (lib): b/mod.rs is a `mod.rs`: this workspace writes a module as `name.rs`, beside its folder `name/` when it has children",
        ],
        "{found:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
