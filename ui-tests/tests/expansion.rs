//! `macros/doc/expansion.md` shows what `cargo expand` prints for its example: the
//! compiler's own output, not a hand-written copy. This test builds the example as a
//! crate of its own, asks rustc for its expansion (`-Zunpretty=expanded`, what
//! `cargo expand` runs, allowed on a stable compiler by `RUSTC_BOOTSTRAP=1`), and compares
//! it with the page's block. `BLESS=1` rewrites the block; read the diff.

use std::path::Path;
use std::process::Command;

use outbound_guard_ui_tests::{scratch_crate_with_build, workspace};

/// The page's example: its first block, as written.
fn example(page: &str) -> &str {
    block(page)
}

/// The page's expansion: the block that follows "becomes".
fn shown(page: &str) -> &str {
    block(&page[page.find("becomes").expect("the page says what it becomes")..])
}

fn block(page: &str) -> &str {
    let fence = "```ignore\n";
    let start = page.find(fence).expect("a fenced block") + fence.len();
    let len = page[start..].find("```\n").expect("the block ends");
    &page[start..start + len]
}

/// rustc's expansion of `lib_rs`, from the struct on (the prelude and the example's
/// error type before it are the user's own code). The crate's build script tracks the
/// settings file (`build::track`), so the expansion holds no copy of it or of
/// `Cargo.toml`, whose bytes would name this machine's directories.
fn expanded(lib_rs: &str) -> String {
    let build_rs = "fn main() {\n    outbound_guard_settings::build::track();\n}\n";
    let (project, target) = scratch_crate_with_build("expansion", lib_rs, Some(build_rs));
    std::fs::write(project.join("resilience.toml"), "[systems.sber]\n").unwrap();
    let output = Command::new(env!("CARGO"))
        .args([
            "rustc",
            "--offline",
            "--quiet",
            "--lib",
            "--profile",
            "check",
        ])
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .args(["--", "-Zunpretty=expanded"])
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let from = text
        .find("pub struct SberAdapter")
        .expect("the expansion holds the adapter");
    text[from..].to_owned()
}

#[test]
fn the_expansion_page_is_what_the_compiler_prints() {
    let path = workspace().join("macros/doc/expansion.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let actual = expanded(example(&page));
    if std::env::var_os("BLESS").is_some() {
        let old = shown(&page);
        let at = old.as_ptr() as usize - page.as_ptr() as usize;
        let blessed = format!("{}{actual}{}", &page[..at], &page[at + old.len()..]);
        std::fs::write(Path::new(&path), blessed).unwrap();
        return;
    }
    assert_eq!(
        shown(&page),
        actual,
        "macros/doc/expansion.md is not what rustc prints for its example: rerun with BLESS=1 and read the diff"
    );
}
