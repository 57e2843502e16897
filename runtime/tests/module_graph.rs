//! The runtime's modules import each other without a circle: every `crate::…` and
//! `super::…` path in `src/**/*.rs` (outside comments) is an edge from the file's module
//! to the deepest module the path names, and `lib.rs`'s `pub use module::…` are the
//! root's edges. The graph must be acyclic, no module may import an item parked in
//! `lib.rs` (siblings import siblings by their module path), and no module imports one
//! of its ancestors (a child is a part of its parent; it must not lean on it back).
//!
//! `MODULE_GRAPH_SRC=/path/to/runtime/src cargo test -p outbound-guard --test module_graph`
//! checks another tree (it fails on the tree before this test was written).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The root module, `lib.rs`.
const ROOT: &str = "crate";

fn source_dir() -> PathBuf {
    std::env::var_os("MODULE_GRAPH_SRC").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        PathBuf::from,
    )
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `lib.rs` → `crate`, `a.rs` and `a/mod.rs` → `a`, `a/b.rs` → `a::b`. Two files are
/// declared under another name in `lib.rs` (`#[path]`): `private.rs` is `__private`, and
/// `metrics/off.rs` is `metrics` itself without the feature.
fn module_of(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().expect("a file name");
    let stem = file.trim_end_matches(".rs");
    if !matches!(stem, "lib" | "mod") {
        parts.push(stem.to_owned());
    }
    let module = parts.join("::");
    match module.as_str() {
        "" => ROOT.to_owned(),
        "private" => "__private".to_owned(),
        "metrics::off" => "metrics".to_owned(),
        _ => module,
    }
}

/// The code of a file without its comments (line comments and doc comments; the runtime
/// has no block comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // `//` inside a string literal (a URL) is rare enough to check by hand.
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path that follows `prefix` (`crate::` or `super::`) in `code`, as segments; a
/// group `crate::{a::X, b::{Y, Z}}` gives one path per item.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        let after = &rest[i + prefix.len()..];
        rest = after;
        // `$crate::` in a macro is the user's crate's view; `xcrate::` is another word.
        if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        group(after, &mut Vec::new(), &mut out);
    }
    out
}

/// Reads one path (or a `{…}` group of them) at the start of `text` after `stem`.
fn group(text: &str, stem: &mut Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let text_start = text.len() - text.trim_start().len();
    let mut i = text_start;
    let bytes = text.as_bytes();
    if bytes.get(i) == Some(&b'{') {
        i += 1;
        loop {
            i += group(&text[i..], stem, out);
            let skip = text[i..].len() - text[i..].trim_start().len();
            i += skip;
            match bytes.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => return i + 1,
                _ => return i,
            }
            let skip = text[i..].len() - text[i..].trim_start().len();
            if bytes.get(i + skip) == Some(&b'}') {
                return i + skip + 1;
            }
        }
    }
    let ident_len = text[i..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len() - i);
    if ident_len == 0 {
        if !stem.is_empty() {
            out.push(stem.clone());
        }
        return i;
    }
    stem.push(text[i..i + ident_len].to_owned());
    i += ident_len;
    let consumed = if text[i..].starts_with("::") {
        i + 2 + group(&text[i + 2..], stem, out)
    } else {
        out.push(stem.clone());
        i
    };
    stem.pop();
    consumed
}

/// Every `super::` path of `module`'s `code`, from the crate root. Inside an inline
/// module (`mod json { … }`, `mod tests { … }`: a line indented deeper than the last
/// `mod name {` line before it) `super` is the file's own module, otherwise its parent.
fn super_paths(code: &str, module: &str) -> Vec<Vec<String>> {
    let segments = |m: &str| -> Vec<String> {
        if m == ROOT {
            Vec::new()
        } else {
            m.split("::").map(str::to_owned).collect()
        }
    };
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut inline_mod: Option<usize> = None;
    let mut out = Vec::new();
    for line in code.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words.iter().position(|w| *w == "mod") {
            if words.get(at + 2) == Some(&"{") {
                inline_mod = Some(indent(line));
            }
        }
        if !line.contains("super::") {
            continue;
        }
        let inside = inline_mod.is_some_and(|depth| indent(line) > depth);
        let base = if inside {
            segments(module)
        } else {
            parent(module).map(|p| segments(&p)).unwrap_or_default()
        };
        for path in paths_after(line, "super::") {
            out.push(base.iter().cloned().chain(path).collect());
        }
    }
    out
}

/// The deepest known module that `path` (segments from the crate root) names.
fn resolve(path: &[String], modules: &BTreeSet<String>) -> String {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
        .unwrap_or_else(|| ROOT.to_owned())
}

fn parent(module: &str) -> Option<String> {
    match module.rsplit_once("::") {
        Some((parent, _)) => Some(parent.to_owned()),
        None if module == ROOT => None,
        None => Some(ROOT.to_owned()),
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = source_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("readable source file");
            (f.strip_prefix(&src).unwrap().to_owned(), code(&text))
        })
        .map(|(relative, code)| (module_of(&relative), code))
        .fold(BTreeMap::new(), |mut all, (module, code)| {
            all.entry(module)
                .or_insert_with(String::new)
                .push_str(&code);
            all
        });
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &modules {
        let to = edges.entry(module.clone()).or_default();
        for path in paths_after(code, "crate::") {
            to.insert(resolve(&path, &names));
        }
        for path in super_paths(code, module) {
            to.insert(resolve(&path, &names));
        }
        if module == ROOT {
            // `pub use breaker::{…}`: the root's re-exports.
            for line in code.lines() {
                let line = line.trim_start();
                if let Some(rest) = line.strip_prefix("pub use ") {
                    let first = rest.split("::").next().unwrap_or_default();
                    if names.contains(first) {
                        to.insert(first.to_owned());
                    }
                }
            }
        }
        to.remove(module);
    }
    edges
}

/// A circle of modules, if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut done, &mut Vec::new()))
}

#[test]
fn the_parser_reads_grouped_and_nested_paths() {
    let found = paths_after(
        "use crate::{a::X, b::{c::Y, Z}};\nlet x = $crate::q::R; crate::d::f(1); super::e::G",
        "crate::",
    );
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(found, ["a::X", "b::c::Y", "b::Z", "d::f"]);
    let modules: BTreeSet<String> = ["a", "b", "b::c"].map(str::to_owned).into();
    assert_eq!(
        resolve(&["b".into(), "c".into(), "Y".into()], &modules),
        "b::c"
    );
    assert_eq!(resolve(&["Guard".into()], &modules), ROOT);
}

#[test]
fn the_checker_finds_a_circle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges
        .entry("guard".into())
        .or_default()
        .insert("call".into());
    edges
        .entry("call".into())
        .or_default()
        .insert("options".into());
    edges
        .entry("options".into())
        .or_default()
        .insert("guard".into());
    assert_eq!(
        find_cycle(&edges).unwrap(),
        ["call", "options", "guard", "call"]
    );
}

#[test]
fn the_runtimes_modules_import_each_other_without_a_circle() {
    let edges = graph();
    assert!(edges.len() > 20, "every module read: {:?}", edges.keys());
    let mut leaning = Vec::new();
    // A unit-test module (compiled only for the tests, never into the library) exists to
    // test its parent, and may import it.
    let is_test = |m: &str| {
        m.rsplit("::")
            .next()
            .is_some_and(|last| last.ends_with("tests") || last == "test_recorder")
    };
    for (module, to) in edges.iter().filter(|(m, _)| !is_test(m)) {
        for target in to {
            let mut up = parent(module);
            while let Some(ancestor) = up {
                if &ancestor == target {
                    leaning.push(format!("{module} → {target}"));
                }
                up = parent(&ancestor);
            }
        }
    }
    let cycle = find_cycle(&edges).map(|c| c.join(" → "));
    assert!(
        leaning.is_empty() && cycle.is_none(),
        "a circle of module imports: {cycle:?}\nmodules importing from an ancestor (for the root: items re-exported in lib.rs; import them from their own module): {leaning:#?}"
    );
}
