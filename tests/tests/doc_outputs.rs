//! The command outputs the docs show are the goldens' text: a `text` block of a page that
//! shows the `outbound-guard` command's screens ([`PAGES`]) whose first line begins a
//! line of one of the CLI's golden texts (the `expect![[r#"…"#]]` blocks of
//! `cli/tests/*.rs`) must be a run of that golden's lines, as `cargo test` holds them.
//! So a screen changed on purpose (`UPDATE_EXPECT=1`) fails here until the page shows
//! it too. A block no golden begins (a command line, a hand-written sketch) is not
//! compared; the test says how many blocks it compared, and requires at least one per
//! page that names a golden's screen.

use std::path::{Path, PathBuf};

mod common;

use common::workspace_root;

/// Pages that show the command's screens, and how many of their blocks the goldens hold
/// at least (so a page whose blocks drift away from every golden fails, too).
const PAGES: &[(&str, usize)] = &[
    ("cli/README.md", 2),
    ("docs/tune.md", 1),
    ("docs/replay.md", 1),
];

/// The golden texts of `cli/tests/*.rs`, dedented as expect-test compares them.
fn goldens(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("cli/tests"))
        .expect("the CLI's tests")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a test file");
        let mut rest = text.as_str();
        while let Some(start) = rest.find("expect![[r#\"") {
            let body = &rest[start + "expect![[r#\"".len()..];
            let end = body.find("\"#]]").expect("a closed golden text");
            let name = file
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            out.push((name, dedent(&body[..end])));
            rest = &body[end..];
        }
    }
    out
}

/// A golden's lines less their common indentation, as `expect!` reads them.
fn dedent(text: &str) -> Vec<String> {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| l.get(indent..).unwrap_or("").trim_end().to_owned())
        .collect();
    // The closing `"#]]`'s line.
    if lines.last().is_some_and(String::is_empty) && text.ends_with(' ') {
        lines.pop();
    }
    lines
}

/// A page's `text` blocks: the line each starts on, and its lines.
fn text_blocks(page: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<String>)> = None;
    for (i, line) in page.lines().enumerate() {
        match &mut open {
            None if line.trim_start() == "```text" => open = Some((i + 2, Vec::new())),
            Some(_) if line.trim_start() == "```" => out.extend(open.take()),
            Some((_, lines)) => lines.push(line.trim_end().to_owned()),
            None => {}
        }
    }
    out
}

/// A block's output: less the command line that leads it (`$ outbound-guard …`, with its
/// `\` continuations) and, when no golden holds it, the output's first line (`tune`'s
/// golden leaves out its first line, whose timing varies).
fn output(block: &[String], goldens: &[(String, Vec<String>)]) -> Vec<String> {
    let mut start = 0;
    if block.first().is_some_and(|l| l.starts_with("$ ")) {
        start = 1;
        while start < block.len() && block[start - 1].ends_with('\\') {
            start += 1;
        }
        let held = |l: &String| goldens.iter().any(|(_, g)| g.contains(l));
        if block.get(start).is_some_and(|l| !held(l))
            && block.get(start + 1).is_some_and(String::is_empty)
        {
            start += 1;
        }
    }
    block[start.min(block.len())..].to_vec()
}

/// Whether `block` is a run of `golden`'s lines, a line `…` standing for one or more
/// lines left out.
fn shown_in(block: &[String], golden: &[String]) -> bool {
    let parts: Vec<&[String]> = block.split(|l| l.trim() == "…").collect();
    (0..golden.len()).any(|first| {
        let mut at = first;
        parts.iter().enumerate().all(|(i, part)| {
            let found = if i == 0 {
                golden[at..].starts_with(part).then_some(at)
            } else {
                // After an elision: at least one line left out.
                (at + 1..=golden.len().saturating_sub(part.len()))
                    .find(|&j| golden[j..].starts_with(part))
            };
            found.is_some_and(|j| {
                at = j + part.len();
                true
            })
        })
    })
}

#[test]
fn the_screens_the_docs_show_are_the_goldens() {
    let root = workspace_root();
    let goldens = goldens(&root);
    assert!(
        goldens.len() >= 5,
        "the CLI's golden texts: {}",
        goldens.len()
    );
    let mut wrong = Vec::new();
    for (page, at_least) in PAGES {
        let text = std::fs::read_to_string(root.join(page)).expect("a page");
        let mut compared = 0;
        for (line, block) in text_blocks(&text) {
            let block = output(&block, &goldens);
            let Some(first) = block.iter().find(|l| !l.is_empty()) else {
                continue;
            };
            let begun: Vec<&(String, Vec<String>)> = goldens
                .iter()
                .filter(|(_, g)| g.iter().any(|l| l.starts_with(first.as_str())))
                .collect();
            if begun.is_empty() {
                continue;
            }
            compared += 1;
            if !begun.iter().any(|(_, g)| shown_in(&block, g)) {
                let files: Vec<&str> = begun.iter().map(|(f, _)| f.as_str()).collect();
                wrong.push(format!(
                    "{page}:{line}: the block is not the golden text it begins (cli/tests: {})",
                    files.join(", ")
                ));
            }
        }
        if compared < *at_least {
            wrong.push(format!(
                "{page}: {compared} blocks compared with the goldens, {at_least} expected"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_block_is_a_run_of_a_goldens_lines() {
    let golden = dedent("\n    a\n      b\n    c\n");
    assert_eq!(golden, ["a", "  b", "c"]);
    assert!(shown_in(&["  b".to_owned(), "c".to_owned()], &golden));
    assert!(!shown_in(&["a".to_owned(), "c".to_owned()], &golden));
    assert!(shown_in(
        &["a".to_owned(), "…".to_owned(), "c".to_owned()],
        &golden
    ));
    assert!(!shown_in(
        &[
            "a".to_owned(),
            "…".to_owned(),
            "  b".to_owned(),
            "c".to_owned()
        ],
        &["a".to_owned(), "  b".to_owned(), "c".to_owned()]
    ));
    let blocks = text_blocks("x\n```text\none\ntwo\n```\n");
    assert_eq!(blocks, [(3, vec!["one".to_owned(), "two".to_owned()])]);
}
