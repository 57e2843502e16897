//! The "Generated clients" page (`docs/generated-clients.md`) shows this example's code:
//! each of its Rust blocks is a run of lines of `build.rs` or `src/lib.rs` (compared
//! without indentation, the block's `// file` label aside), so the page cannot drift
//! from what the tests build and run.

use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn trimmed(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).collect()
}

/// Whether `block`'s lines are a run of `source`'s, indentation aside.
fn shown_in(block: &[&str], source: &[&str]) -> bool {
    !block.is_empty() && source.windows(block.len()).any(|window| window == block)
}

#[test]
fn the_pages_rust_blocks_are_this_examples_code() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = read(&dir.join("../../docs/generated-clients.md"));
    let build = read(&dir.join("build.rs"));
    let lib = read(&dir.join("src/lib.rs"));
    let (build, lib) = (trimmed(&build), trimmed(&lib));
    let mut shown = 0;
    let mut rest = page.as_str();
    while let Some(start) = rest.find("```rust,ignore\n") {
        let body = &rest[start + "```rust,ignore\n".len()..];
        let end = body.find("```\n").expect("a closed code block");
        let block = trimmed(&body[..end]);
        let block: Vec<&str> = block
            .into_iter()
            .skip_while(|line| {
                line.starts_with("// ")
                    && Path::new(line)
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("rs"))
            })
            .collect();
        // A block may hold several items, each a run of its own, blank lines apart.
        for item in block.split(|line| line.is_empty()) {
            assert!(
                shown_in(item, &build) || shown_in(item, &lib),
                "docs/generated-clients.md shows code that is not the example's:\n{}",
                item.join("\n")
            );
        }
        shown += 1;
        rest = &body[end..];
    }
    assert!(shown >= 5, "the page's Rust blocks: {shown}");
}
