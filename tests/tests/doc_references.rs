//! The docs name only what exists, and quote the design card verbatim.
//!
//! Read: every Markdown file of the workspace (found by walking it; `target/` and hidden
//! directories aside) and the doc comments (`//!` and `///`) of every member crate's
//! `src/`. Checked:
//!
//! - **a repository path**: an inline code span or a Markdown link of the prose, without
//!   spaces, that holds a `/` and starts with a directory of the repository
//!   (`runtime/src/breaker.rs`, `tests/faults.rs`, `bulkhead/line.rs`; not `DIR/x.svg`
//!   nor a user's `src/adapters/sber.rs`), and in a code block each word with a `/` and a
//!   file extension this repository uses (`cargo mutants -f runtime/src/breaker.rs`),
//!   must exist: relative to the doc's directory, its crate's, the workspace root, or a
//!   member's directory or `src/` (as a table of crates names its files); a page that
//!   shows an example crate's files, relative to that crate ([`EXAMPLE_CRATES`]). A
//!   `:line` suffix and an `#anchor` are dropped; a `*` glob's directory must exist. A
//!   file that is gone is history: name it without code formatting ("was state.rs");
//! - **an item**, in a code span of the prose: in `Type::member` (`Guard::call`,
//!   `outbound_guard::Guards::health`), a type of this workspace's crates must have that
//!   member (a method of an impl block of its own or of a trait it implements, a
//!   variant, a named field, an associated constant or type, a derived trait's method); a
//!   span that is a type's name alone (`Guard`, `Option<Guard>`) must name a type, an
//!   enum's variant or a Prometheus alert of `ops/` that exists; a path through a
//!   workspace crate (`outbound_guard::settings::PATH_VARIABLE`) must end in an item
//!   that exists.
//!
//! Names that are not this workspace's are left alone: those a doc's own examples
//! define (a `struct`, `enum`, `trait`, `type`, `fn`, `mod` or `impl … for` in one of its
//! code blocks: `SberAdapter`, `PaymentPortError`), external crates' items
//! ([`EXTERNAL`]), and in `CHANGELOG.md` the entries that say an item was removed,
//! renamed or replaced. The workspace's items are read from the sources (`src/` of every
//! member, items inside macro calls and `macro_rules!` bodies included) with `syn`, so
//! the test is fast, offline and stable.
//!
//! Wherever a doc quotes the card's sentence (a line with `circuit_breaker(`,
//! `system = "sber"` and the card's `PaymentPortError` or an elided `error_map = …`),
//! the line holds it verbatim ([`CARD`]); the workspace README, the runtime's README and
//! the runtime's front page each quote it.
//!
//! The `outbound-guard` command is introduced alike where it is introduced (the first
//! line of `cli/src/main.rs`, `cli/Cargo.toml`'s description, the README's paragraph that
//! links its README): each names every subcommand of `cli/src/args.rs`'s `Command`, in
//! its order.
//!
//! A failure names the file, the line and the missing path or item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

use common::{members, workspace_root};

/// The design card's sentence, as the docs quote it.
const CARD: &str =
    r#"#[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]"#;

/// Misquotes in files that others are editing now, each to be fixed there and then
/// removed here (`file`, the line trimmed, a doc comment's without its `///`); one that
/// is no longer found fails the test.
const MISQUOTED: &[(&str, &str)] = &[
    (
        "macros/src/lib.rs",
        r#"#[outbound_guard::circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]"#,
    ),
    (
        "macros/doc/expansion.md",
        r#"derive, and `#[circuit_breaker(system = "sber", error_map = …)]` on its public async"#,
    ),
];

/// Docs that must quote the card (workspace-relative).
const QUOTE_THE_CARD: &[&str] = &["README.md", "runtime/README.md", "runtime/src/lib.rs"];

/// File extensions that make a code span a repository path.
const EXTENSIONS: &[&str] = &[
    "rs", "toml", "md", "json", "jsonl", "txt", "stderr", "svg", "gz", "sh", "yml", "yaml",
    "proto", "csv", "lock",
];

/// Types of other crates (the standard library, tokio, tower, hyper, tonic, reqwest,
/// serde, tracing, metrics, …) that the docs name. A name here is never checked; a name
/// of this workspace's crates never belongs here.
const EXTERNAL: &[&str] = &[
    // std
    "Arc",
    "Box",
    "Duration",
    "Err",
    "Future",
    "HashMap",
    "Instant",
    "None",
    "Ok",
    "Option",
    "Result",
    "Self",
    "Send",
    "Some",
    "String",
    "Sync",
    "SystemTime",
    "Vec",
    "Drop",
    "Default",
    "Debug",
    "Display",
    "Clone",
    "Copy",
    "PartialEq",
    "Eq",
    "Hash",
    "From",
    "Into",
    "Error",
    "Mutex",
    "RwLock",
    "AtomicU64",
    "AtomicU32",
    "AtomicUsize",
    "Pin",
    "Poll",
    "Waker",
    "Context",
    "Iterator",
    "IntoIterator",
    "Path",
    "PathBuf",
    "Cow",
    "Rc",
    "Cell",
    "RefCell",
    "Ordering",
    "Infallible",
    "Sized",
    "Unpin",
    "Fn",
    "FnOnce",
    "FnMut",
    "PhantomData",
    "BTreeMap",
    "HashSet",
    "BTreeSet",
    "OnceLock",
    "LazyLock",
    "TypeId",
    "Any",
    "Wrapping",
    "NonZeroU32",
    "NonZeroUsize",
    "Deref",
    "Write",
    "Read",
    // tokio, futures
    "JoinHandle",
    "Semaphore",
    "OwnedSemaphorePermit",
    "SemaphorePermit",
    "Notify",
    "Sleep",
    "Timeout",
    "Elapsed",
    "JoinSet",
    "Runtime",
    "Handle",
    "AbortHandle",
    "BoxFuture",
    "Stream",
    // tower, hyper, http, tonic, axum, reqwest
    "Service",
    "Layer",
    "ServiceBuilder",
    "ServiceExt",
    "Request",
    "Response",
    "StatusCode",
    "HeaderMap",
    "HeaderValue",
    "Uri",
    "Method",
    "Body",
    "Endpoint",
    "Channel",
    "Status",
    "Code",
    "Client",
    "ClientBuilder",
    "RequestBuilder",
    "Router",
    "Json",
    "Bytes",
    "Incoming",
    "Full",
    "Empty",
    "BoxBody",
    "Connector",
    "HttpConnector",
    "Legacy",
    "Streaming",
    // serde, tracing, metrics, others
    "Serialize",
    "Deserialize",
    "Deserializer",
    "Serializer",
    "Value",
    "Span",
    "Level",
    "Subscriber",
    "Counter",
    "Gauge",
    "Histogram",
    "Recorder",
    "Key",
    "Label",
    "PrometheusBuilder",
    "Watcher",
    "RecommendedWatcher",
    "Distributed",
    "TokenStream",
    "Rng",
    "Url",
    "Buffer",
    "ConcurrencyLimit",
    "ClassifyResponse",
    "Registry",
    "DebuggingRecorder",
    // tonic's `Code` variants
    "Ok",
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
    // progenitor's `Error` variants, and the types it generates from `examples/generated`'s
    // spec at build time (so no source file defines them)
    "CommunicationError",
    "InvalidUpgrade",
    "ResponseBodyError",
    "ErrorResponse",
    "UnexpectedResponse",
    "InvalidResponsePayload",
    "InvalidRequest",
    "Custom",
    "Problem",
    // the peers the benchmarks compare with (`recloser`, `failsafe`), figment, progenitor,
    // tonic's generated client, Kubernetes
    "Recloser",
    "AsyncRecloser",
    "CircuitBreaker",
    "Serialized",
    "HooksMode",
    "EchoClient",
    "ConfigMap",
    // more of std, tower-http, hyper, metrics-exporter-prometheus, figment, tonic's
    // generated server trait
    "BinaryHeap",
    "RandomState",
    "Acquire",
    "Relaxed",
    "Output",
    "Matcher",
    "Env",
    "Environment",
    "GrpcErrorsAsFailures",
    "ServerErrorsAsFailures",
    "Builder",
    "Echo",
    // a format's name
    "OpenAPI",
    // names the comments use for what a user writes (`PortResult<T>`) or a type
    // parameter (`Rest`)
    "PortResult",
    "Rest",
];

/// Other projects' files the docs name: the style guide's Python services.
const EXTERNAL_PATHS: &[&str] = &["bootstrap/exception_handlers.py"];

/// Pages that show an example crate's files name them relative to that crate.
const EXAMPLE_CRATES: &[(&str, &str)] = &[
    ("docs/testing.md", "examples/testing"),
    ("docs/generated-clients.md", "examples/generated"),
    ("README.md", "examples/use-it"),
];

/// The crates of this workspace as Rust names them (`outbound_guard_settings`).
fn workspace_crate(segment: &str) -> bool {
    segment == "outbound_guard" || segment.starts_with("outbound_guard_")
}

fn files_with(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            // A build directory is marked by cargo's `CACHEDIR.TAG`, wherever it lies.
            if !name.starts_with('.') && name != "target" && !path.join("CACHEDIR.TAG").is_file() {
                files_with(&path, extension, out);
            }
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

// ---------------------------------------------------------------------------------
// The workspace's items, read from its source.

/// Every item the workspace's sources define.
#[derive(Default)]
struct Items {
    /// Every item's name: types, functions, modules, macros, constants, statics.
    names: BTreeSet<String>,
    /// A type's or trait's name → its members (methods, variants, associated items).
    members: BTreeMap<String, BTreeSet<String>>,
    /// `(type, trait)` for each `impl Trait for Type`.
    impls: Vec<(String, String)>,
    /// Every enum's variants, which the docs also name alone (`Observe`).
    variants: BTreeSet<String>,
    /// Types some of whose methods a `macro_rules!` body names by a variable: their
    /// members are not all known, so not checked.
    open: BTreeSet<String>,
}

impl Items {
    fn read(root: &Path) -> Self {
        let mut items = Items::default();
        for member in members(root).iter().map(|m| root.join(m)) {
            let mut files = Vec::new();
            files_with(&member.join("src"), "rs", &mut files);
            for file in files {
                let text = std::fs::read_to_string(&file).expect("a source file");
                let parsed = syn::parse_file(&text)
                    .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
                items.add(&parsed.items);
            }
        }
        // A trait's methods are its implementors' too.
        for (ty, tr) in std::mem::take(&mut items.impls) {
            let inherited = items.members.get(&tr).cloned().unwrap_or_default();
            items.members.entry(ty).or_default().extend(inherited);
        }
        items
    }

    fn type_name(&mut self, name: String, attrs: &[syn::Attribute]) -> String {
        let derived = self.members.entry(name.clone()).or_default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
            let _ = attr.parse_nested_meta(|meta| {
                let method = match meta.path.segments.last().map(|s| s.ident.to_string()) {
                    Some(t) if t == "Default" => "default",
                    Some(t) if t == "Clone" => "clone",
                    Some(t) if t == "Debug" => "fmt",
                    Some(t) if t == "PartialEq" => "eq",
                    Some(t) if t == "Hash" => "hash",
                    Some(t) if t == "PartialOrd" => "partial_cmp",
                    Some(t) if t == "Ord" => "cmp",
                    _ => return Ok(()),
                };
                derived.insert(method.to_owned());
                Ok(())
            });
        }
        self.names.insert(name.clone());
        name
    }

    fn add(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    let name = self.type_name(s.ident.to_string(), &s.attrs);
                    let fields = s.fields.iter().filter_map(|f| f.ident.as_ref());
                    let fields = fields.map(ToString::to_string);
                    self.members.entry(name).or_default().extend(fields);
                }
                syn::Item::Union(u) => {
                    self.type_name(u.ident.to_string(), &u.attrs);
                }
                syn::Item::Type(t) => {
                    self.type_name(t.ident.to_string(), &t.attrs);
                }
                syn::Item::Enum(e) => {
                    let name = self.type_name(e.ident.to_string(), &e.attrs);
                    let variants: Vec<String> =
                        e.variants.iter().map(|v| v.ident.to_string()).collect();
                    self.variants.extend(variants.iter().cloned());
                    self.members.entry(name).or_default().extend(variants);
                }
                syn::Item::Trait(t) => {
                    let name = self.type_name(t.ident.to_string(), &t.attrs);
                    let members = t.items.iter().filter_map(|i| match i {
                        syn::TraitItem::Fn(f) => Some(f.sig.ident.to_string()),
                        syn::TraitItem::Const(c) => Some(c.ident.to_string()),
                        syn::TraitItem::Type(t) => Some(t.ident.to_string()),
                        _ => None,
                    });
                    self.members.entry(name).or_default().extend(members);
                }
                syn::Item::Impl(i) => self.add_impl(i),
                syn::Item::Fn(f) => {
                    self.names.insert(f.sig.ident.to_string());
                }
                syn::Item::Mod(m) => {
                    self.names.insert(m.ident.to_string());
                    if let Some((_, inner)) = &m.content {
                        self.add(inner);
                    }
                }
                syn::Item::Macro(m) => {
                    if let Some(ident) = &m.ident {
                        self.names.insert(ident.to_string());
                        self.add_written_in(m.mac.tokens.clone(), None);
                    } else if let Ok(inner) = syn::parse2::<syn::File>(m.mac.tokens.clone()) {
                        // Items written inside a macro's call (`pin_project! { … }`).
                        self.add(&inner.items);
                    }
                }
                syn::Item::Const(c) => {
                    self.names.insert(c.ident.to_string());
                }
                syn::Item::Static(s) => {
                    self.names.insert(s.ident.to_string());
                }
                _ => {}
            }
        }
    }

    /// The types and functions a `macro_rules!` body writes (`struct SystemSettings`).
    /// `impl` blocks there give their type the methods named as written; a method named
    /// by a macro variable (`fn $name`) leaves the type's methods open.
    fn add_written_in(&mut self, tokens: proc_macro2::TokenStream, of: Option<&str>) {
        let mut previous = String::new();
        let mut before = String::new();
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Group(g) => {
                    let impl_of = (before == "impl").then_some(previous.as_str());
                    self.add_written_in(g.stream(), impl_of.or(of));
                    previous.clear();
                }
                proc_macro2::TokenTree::Ident(ident) => {
                    let ident = ident.to_string();
                    if ["struct", "enum", "trait", "type", "union"].contains(&previous.as_str()) {
                        self.type_name(ident.clone(), &[]);
                    } else if previous == "fn" {
                        self.names.insert(ident.clone());
                        if let Some(ty) = of {
                            self.members
                                .entry(ty.to_owned())
                                .or_default()
                                .insert(ident.clone());
                        }
                    }
                    before = std::mem::replace(&mut previous, ident);
                }
                proc_macro2::TokenTree::Punct(p) if p.as_char() == '$' && previous == "fn" => {
                    if let Some(ty) = of {
                        self.open.insert(ty.to_owned());
                    }
                    previous.clear();
                }
                _ => previous.clear(),
            }
        }
    }

    fn add_impl(&mut self, i: &syn::ItemImpl) {
        let syn::Type::Path(ty) = &*i.self_ty else {
            return;
        };
        let Some(ty) = ty.path.segments.last().map(|s| s.ident.to_string()) else {
            return;
        };
        let members = i.items.iter().filter_map(|item| match item {
            syn::ImplItem::Fn(f) => Some(f.sig.ident.to_string()),
            syn::ImplItem::Const(c) => Some(c.ident.to_string()),
            syn::ImplItem::Type(t) => Some(t.ident.to_string()),
            _ => None,
        });
        self.members.entry(ty.clone()).or_default().extend(members);
        if let Some((_, tr, _)) = &i.trait_ {
            if let Some(tr) = tr.segments.last() {
                self.impls.push((ty, tr.ident.to_string()));
            }
        }
    }

    fn is_type(&self, name: &str) -> bool {
        self.members.contains_key(name) && self.names.contains(name)
    }
}

// ---------------------------------------------------------------------------------
// The docs' text.

/// One doc: its path and its lines, numbered from 1.
struct Doc {
    path: PathBuf,
    lines: Vec<(usize, String)>,
}

/// Every Markdown file, and the doc comments of each member crate's sources.
fn docs(root: &Path) -> Vec<Doc> {
    let mut out = Vec::new();
    let mut markdown = Vec::new();
    files_with(root, "md", &mut markdown);
    for path in markdown {
        let text = std::fs::read_to_string(&path).expect("a Markdown file");
        let lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.to_owned()))
            .collect();
        out.push(Doc { path, lines });
    }
    for member in members(root).iter().map(|m| root.join(m)) {
        let mut sources = Vec::new();
        files_with(&member.join("src"), "rs", &mut sources);
        for path in sources {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let lines = text
                .lines()
                .enumerate()
                .filter_map(|(i, l)| {
                    let l = l.trim_start();
                    let l = l.strip_prefix("//!").or_else(|| l.strip_prefix("///"))?;
                    Some((i + 1, l.strip_prefix(' ').unwrap_or(l).to_owned()))
                })
                .collect();
            out.push(Doc { path, lines });
        }
    }
    out
}

/// A doc's lines split into prose and code: `(line, text, in_code)`.
fn blocks(doc: &Doc) -> Vec<(usize, &str, bool)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (n, line) in &doc.lines {
        let trimmed = line.trim_start();
        let opens = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        match (fence, opens) {
            (None, Some(f)) => {
                fence = Some(f);
                out.push((*n, line.as_str(), true));
            }
            (Some(f), Some(g)) if f == g => {
                fence = None;
                out.push((*n, line.as_str(), true));
            }
            _ => out.push((*n, line.as_str(), fence.is_some())),
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The names a doc's code blocks define: `struct X`, `enum X`, `fn x`, ….
fn defined_by_examples(doc: &Doc) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line, code) in blocks(doc) {
        if !code {
            continue;
        }
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if [
                "struct", "enum", "trait", "type", "fn", "mod", "union", "impl", "for",
            ]
            .contains(&pair[0])
            {
                out.insert(pair[1].to_owned());
            }
        }
    }
    out
}

/// The inline code spans of a line of prose.
fn code_spans(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        let ticks = rest[start..].bytes().take_while(|&b| b == b'`').count();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        let Some(end) = after.find(&closing) else {
            break;
        };
        out.push(after[..end].trim());
        rest = &after[end + ticks..];
    }
    out
}

/// The targets of a line's Markdown links, `[text](target)`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else {
            break;
        };
        out.push(after[..end].trim());
        rest = &after[end..];
    }
    out
}

/// The repository path a code span or link names, if it names one.
fn as_path(span: &str, root: &Path, bases: &[PathBuf]) -> Option<String> {
    if span.is_empty()
        || span.contains(char::is_whitespace)
        || span.contains("://")
        || span.contains("::")
        || span.starts_with(['/', '-', '$', '~', '<', '#', '@', '.'].as_slice())
            && !span.starts_with(".ci/")
        || span.contains(['=', '(', '{', '<', '|', ',', '"', '\'', '[', '@'].as_slice())
        || span.starts_with("mailto:")
    {
        return None;
    }
    let path = span.split('#').next().unwrap_or_default();
    // `file.rs:12-34` names lines of the file.
    let path = match path.split_once(':') {
        Some((file, lines))
            if lines
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b':') =>
        {
            file
        }
        Some(_) => return None,
        None => path,
    };
    // A path starts with a directory of the repository: `DIR/sber.svg` (a placeholder)
    // or `src/adapters/sber.rs` in a user's service are not the repository's.
    let first = path.split('/').next().unwrap_or_default();
    let directory = path.contains('/')
        && !first.is_empty()
        && !first.contains('*')
        && bases
            .iter()
            .chain([&root.to_path_buf()])
            .any(|b| b.join(first).is_dir());
    directory.then(|| path.to_owned())
}

fn path_exists(path: &str, bases: &[PathBuf]) -> bool {
    // A glob: its directory part before the first `*` must exist.
    let path = match path.find('*') {
        Some(star) => path[..star].rsplit_once('/').map_or("", |(dir, _)| dir),
        None => path,
    };
    bases.iter().any(|b| b.join(path).exists())
}

/// The `a::b::C` paths in a code span, each as its segments.
fn item_paths(span: &str) -> Vec<Vec<&str>> {
    let bytes = span.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' || bytes[i] == b'$')
            || i > 0 && (is_ident_byte(bytes[i - 1]) || bytes[i - 1] == b'.')
        {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            if j < bytes.len() && bytes[j] == b'$' {
                j += 1;
            }
            while j < bytes.len() && is_ident_byte(bytes[j]) {
                j += 1;
            }
            segments.push(&span[start..j]);
            if span[j..].starts_with("::")
                && span[j + 2..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            {
                j += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 {
            out.push(segments);
        }
        i = j.max(i + 1);
    }
    out
}

fn is_type_name(segment: &str) -> bool {
    segment.starts_with(|c: char| c.is_ascii_uppercase())
        && segment.bytes().any(|b| b.is_ascii_lowercase())
}

/// Which a span names that does not exist, in words; `None` when all exist.
fn missing_item(path: &[&str], items: &Items, own: &BTreeSet<String>) -> Option<String> {
    let path: Vec<&str> = path
        .iter()
        .copied()
        .filter(|s| !["crate", "self", "super", "$crate"].contains(s))
        .collect();
    let first = *path.first()?;
    let ours = workspace_crate(first);
    // The first type named, and the member after it.
    let typed = path.iter().position(|s| is_type_name(s));
    match typed {
        Some(t) => {
            let ty = path[t];
            if own.contains(ty) || EXTERNAL.contains(&ty) && !ours {
                return None;
            }
            if !items.is_type(ty) {
                return (ours || t == 0 || path[..t].iter().all(|s| items.names.contains(*s)))
                    .then(|| format!("type `{ty}`"));
            }
            let member = path.get(t + 1)?;
            let members = &items.members[ty];
            (!members.contains(*member) && !items.open.contains(ty))
                .then(|| format!("`{ty}::{member}`"))
        }
        None if ours => {
            let last = path.last()?;
            (!items.names.contains(*last)).then(|| format!("`{}`", path.join("::")))
        }
        None => None,
    }
}

/// A CHANGELOG entry about a removed or renamed item: its names are history.
fn about_removal(entry: &str) -> bool {
    let entry = entry.to_lowercase();
    [
        "removed",
        "renamed",
        "replaced",
        "gone",
        "deprecated",
        "no longer",
    ]
    .iter()
    .any(|w| entry.contains(w))
}

/// The lines of a doc's prose to check, each with the text of the entry it belongs to
/// (a CHANGELOG bullet and its continuation lines), for [`about_removal`].
fn prose(doc: &Doc) -> Vec<(usize, String, String)> {
    let mut out: Vec<(usize, String, String)> = Vec::new();
    let mut entry_start = 0;
    for (n, line, code) in blocks(doc) {
        if code {
            continue;
        }
        let continues = line.starts_with(' ') && !line.trim().is_empty();
        if !continues {
            entry_start = out.len();
        }
        out.push((n, line.to_owned(), String::new()));
        let entry: String = out[entry_start..]
            .iter()
            .map(|(_, l, _)| l.as_str())
            .collect();
        for o in &mut out[entry_start..] {
            o.2.clone_from(&entry);
        }
    }
    out
}

/// The doc's directory, its crate's directory (the nearest with a `Cargo.toml`) and the
/// root; then each member's directory and its `src/`, as a table of crates names their
/// files (`bulkhead/line.rs` in a row about the runtime).
fn bases(doc: &Path, root: &Path) -> Vec<PathBuf> {
    let dir = doc.parent().expect("a doc is in a directory").to_path_buf();
    let mut crate_dir = dir.clone();
    while !crate_dir.join("Cargo.toml").is_file() && crate_dir.pop() {}
    let mut out = vec![dir, crate_dir, root.to_path_buf()];
    for member in members(root).iter().map(|m| root.join(m)) {
        out.push(member.join("src"));
        out.push(member);
    }
    out
}

/// The repository paths a line of a code block names (`cargo mutants -f
/// runtime/src/breaker.rs`): words with a `/` and a file extension whose first directory
/// is the root's, the doc's or its crate's.
fn code_paths<'a>(line: &'a str, near: &[PathBuf]) -> Vec<&'a str> {
    line.split(|c: char| c.is_whitespace() || "\"'`()[]{},;=<>|".contains(c))
        .filter(|word| {
            let word = word.split(':').next().unwrap_or_default();
            let first = word.split('/').next().unwrap_or_default();
            word.contains('/')
                && !first.is_empty()
                && first != ".."
                && first != "."
                && Path::new(word)
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| EXTENSIONS.contains(&e))
                && near.iter().any(|b| b.join(first).is_dir())
        })
        .map(|word| word.split(':').next().unwrap_or_default())
        .collect()
}

/// The Prometheus alerts `ops/` defines (`- alert: Name`), which the docs name too.
fn alerts(root: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    files_with(&root.join("ops"), "yml", &mut files);
    files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("an ops file");
            let names: Vec<String> = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("- alert:"))
                .map(|n| n.trim().to_owned())
                .collect();
            names
        })
        .collect()
}

/// Every missing path and item of every doc, as `file:line: what`.
fn findings(root: &Path, items: &Items) -> Vec<String> {
    let mut out = Vec::new();
    let alerts = alerts(root);
    for doc in docs(root) {
        let file = doc
            .path
            .strip_prefix(root)
            .unwrap_or(&doc.path)
            .display()
            .to_string();
        let mut bases = bases(&doc.path, root);
        for (page, example) in EXAMPLE_CRATES {
            if file == *page {
                bases.push(root.join(example));
            }
        }
        let own = defined_by_examples(&doc);
        let changelog = file == "CHANGELOG.md";
        let near: Vec<PathBuf> = bases[..3].iter().chain(bases.last()).cloned().collect();
        for (n, line, code) in blocks(&doc) {
            if code {
                for path in code_paths(line, &near) {
                    if !path_exists(path, &bases) {
                        out.push(format!("{file}:{n}: no path `{path}`"));
                    }
                }
            }
        }
        for (n, line, entry) in prose(&doc) {
            if changelog && about_removal(&entry) {
                continue;
            }
            let links = link_targets(&line).into_iter().map(|t| (t, true));
            for (span, link) in code_spans(&line)
                .into_iter()
                .map(|s| (s, false))
                .chain(links)
            {
                if let Some(path) = as_path(span, root, &bases) {
                    if !path_exists(&path, &bases) && !EXTERNAL_PATHS.contains(&path.as_str()) {
                        out.push(format!("{file}:{n}: no path `{path}`"));
                    }
                    continue;
                }
                if link {
                    continue;
                }
                let mut named = item_paths(span);
                let bare = span.split(['<', '(']).next().unwrap_or_default();
                if is_type_name(bare) && bare.bytes().all(is_ident_byte) {
                    named.push(vec![bare]);
                }
                for path in named {
                    if path.len() == 1 && !items.is_type(path[0]) {
                        let ty = path[0];
                        if !own.contains(ty)
                            && !EXTERNAL.contains(&ty)
                            && !items.variants.contains(ty)
                            && !alerts.contains(ty)
                        {
                            out.push(format!("{file}:{n}: no type `{ty}`"));
                        }
                        continue;
                    }
                    if let Some(missing) = missing_item(&path, items, &own) {
                        out.push(format!("{file}:{n}: no {missing} (in `{span}`)"));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_path_and_item_the_docs_name_exists() {
    let root = workspace_root();
    let items = Items::read(&root);
    let findings = findings(&root, &items);
    assert!(
        findings.is_empty(),
        "the docs name {} paths or items that do not exist:\n{}",
        findings.len(),
        findings.join("\n")
    );
}

#[test]
fn the_card_is_quoted_verbatim_wherever_it_is_quoted() {
    let root = workspace_root();
    let mut wrong = Vec::new();
    let mut quoting = BTreeSet::new();
    for doc in docs(&root) {
        let file = doc
            .path
            .strip_prefix(&root)
            .unwrap_or(&doc.path)
            .display()
            .to_string();
        for (n, line) in &doc.lines {
            let quotes = line.contains("circuit_breaker(")
                && line.contains(r#"system = "sber""#)
                && (line.contains("PaymentPortError") || line.contains("error_map = …"));
            if quotes {
                if line.contains(CARD) {
                    quoting.insert(file.clone());
                } else if !MISQUOTED.contains(&(file.as_str(), line.trim())) {
                    wrong.push(format!("{file}:{n}: `{}`", line.trim()));
                }
            }
        }
    }
    for (file, line) in MISQUOTED {
        let still = std::fs::read_to_string(root.join(file)).is_ok_and(|t| {
            t.lines().any(|l| {
                let l = l.trim();
                let l = l
                    .strip_prefix("///")
                    .or_else(|| l.strip_prefix("//!"))
                    .unwrap_or(l);
                l.trim() == *line
            })
        });
        assert!(
            still,
            "{file}: `{line}` is in MISQUOTED but no longer found"
        );
    }
    assert!(
        wrong.is_empty(),
        "the card misquoted (it reads `{CARD}`):\n{}",
        wrong.join("\n")
    );
    let silent: Vec<&&str> = QUOTE_THE_CARD
        .iter()
        .filter(|f| !quoting.contains(**f))
        .collect();
    assert!(
        silent.is_empty(),
        "these docs must quote the card `{CARD}`: {silent:?}"
    );
}

#[test]
fn the_checker_finds_a_missing_path_a_missing_method_and_a_missing_type() {
    let root = workspace_root();
    let items = Items::read(&root);
    let bases = vec![root.clone()];
    let path = as_path("runtime/src/breaker/gone.rs", &root, &bases).expect("a path");
    assert!(!path_exists(&path, &bases));
    let path = as_path("runtime/src/breaker.rs:12-20", &root, &bases).expect("a path");
    assert!(path_exists(&path, &bases));
    assert_eq!(as_path("/health", &root, &bases), None);
    let own = BTreeSet::from(["SberAdapter".to_owned()]);
    assert_eq!(missing_item(&["Guard", "call"], &items, &own), None);
    assert_eq!(
        missing_item(&["Guard", "call_twice"], &items, &own).as_deref(),
        Some("`Guard::call_twice`")
    );
    assert_eq!(
        missing_item(&["outbound_guard", "Gaurd"], &items, &own).as_deref(),
        Some("type `Gaurd`")
    );
    assert_eq!(missing_item(&["SberAdapter", "new"], &items, &own), None);
    assert_eq!(missing_item(&["Duration", "from_secs"], &items, &own), None);
    assert_eq!(
        item_paths("a `x::Y::z(1)` and `B::c`"),
        vec![vec!["x", "Y", "z"], vec!["B", "c"]]
    );
    assert_eq!(code_spans("see `a` and ``b`c``"), vec!["a", "b`c"]);
}

/// The `outbound-guard` command's subcommands, lower-cased, in the order its `Command`
/// enum declares them (`cli/src/args.rs`).
fn subcommands(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("cli/src/args.rs")).expect("the CLI's arguments");
    let parsed = syn::parse_file(&text).expect("the CLI's arguments parse");
    parsed
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Enum(e) if e.ident == "Command" => Some(e),
            _ => None,
        })
        .expect("the CLI's `Command` enum")
        .variants
        .iter()
        .map(|v| v.ident.to_string().to_lowercase())
        .collect()
}

/// The subcommands a description names, in its order (`checks` is `check`).
fn named_commands(description: &str, commands: &[String]) -> Vec<String> {
    description
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter_map(|word| {
            let word = word.to_lowercase();
            commands
                .iter()
                .find(|c| word == **c || word == format!("{c}s") || word == format!("{c}es"))
                .cloned()
        })
        .collect()
}

#[test]
fn the_command_is_described_alike_wherever_it_is_introduced() {
    let root = workspace_root();
    let commands = subcommands(&root);
    assert!(commands.len() >= 5, "the CLI's commands: {commands:?}");
    let read = |file: &str| std::fs::read_to_string(root.join(file)).expect("a file");
    let main = read("cli/src/main.rs");
    let manifest: toml::Table = read("cli/Cargo.toml").parse().expect("the CLI's manifest");
    let readme = read("README.md");
    let readme = readme
        .split("\n\n")
        .find(|p| p.contains("command](cli/README.md)"))
        .expect("README.md introduces the command with a link to its README");
    let introductions = [
        (
            "cli/src/main.rs",
            main.lines().next().unwrap_or_default().to_owned(),
        ),
        (
            "cli/Cargo.toml",
            manifest["package"]["description"]
                .as_str()
                .expect("a description")
                .to_owned(),
        ),
        (
            "README.md",
            readme[readme.find("command](cli/README.md)").unwrap_or(0)..].to_owned(),
        ),
    ];
    for (file, text) in introductions {
        let named = named_commands(&text, &commands);
        assert_eq!(named, commands, "{file} introduces the command as: {text}");
    }
}

/// The first fenced block of `lines`, without its fences.
fn first_block(lines: &[String]) -> Vec<String> {
    let mut inside = lines
        .iter()
        .skip_while(|l| !l.trim_start().starts_with("```"))
        .skip(1);
    let block = inside
        .by_ref()
        .take_while(|l| !l.trim_start().starts_with("```"));
    block.cloned().collect()
}

/// The runtime's front page shows the README's block (not compiled there, as its types
/// are the example's), which `examples/payments-demo/tests/docs.rs` compiles.
#[test]
fn the_runtimes_front_page_leads_with_the_readmes_compiled_block() {
    let root = workspace_root();
    let read = |file: &str| std::fs::read_to_string(root.join(file)).expect("a file");
    let front: Vec<String> = read("runtime/src/lib.rs")
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned())
        .collect();
    let readme: Vec<String> = read("runtime/README.md")
        .lines()
        .map(str::to_owned)
        .collect();
    let block = first_block(&front);
    assert!(
        block.iter().any(|l| l.contains(CARD)),
        "the front page's block: {block:#?}"
    );
    assert_eq!(
        block,
        first_block(&readme),
        "runtime/src/lib.rs's first block is runtime/README.md's"
    );
}
