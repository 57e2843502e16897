//! `outbound-guard check` and `explain`, run as a binary: exit codes, messages identical
//! to a service's startup, line and column of the offending value, `--systems`, `--env`,
//! origins, masking; and `check` over mangled files never panics.

use std::path::PathBuf;

use outbound_guard_settings::{ErrorKind, Loader, Settings};
use predicates::prelude::*;

mod common;
use common::{bin, DEMO};

/// A file in a directory of this test's own.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("og-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_valid_file_passes_with_exit_0() {
    bin()
        .args(["check", DEMO])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("valid, 2 systems: customer, sber"));
}

#[test]
fn an_invalid_value_fails_with_exit_1_and_startups_message_with_its_line() {
    let text = "[systems.sber]\nbase_url = \"http://127.0.0.1:8081\"\ncb_failure_rate = 1.5\n";
    let path = file("bad-rate.toml", text);
    // What a service prints at startup for the same file.
    let startup = Settings::from_path(&path, &[]).unwrap_err();
    assert_eq!(startup.kind(), ErrorKind::OutOfRange);
    let shown = format!("{}:3:19: [systems.sber] `cb_failure_rate`: got 1.5, expected a share greater than 0 and at most 1", path.display());
    assert!(startup.to_string().starts_with(&shown), "{startup}");
    bin()
        .args(["check".as_ref(), path.as_os_str()])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("{startup}\n"));
}

#[test]
fn syntax_errors_unknown_keys_and_broken_orders_name_their_line() {
    for (text, line_col, says) in [
        (
            "[systems.sber]\nread_timeout = \n",
            ":2:16: ",
            "not valid TOML",
        ),
        (
            "[systems.sber]\n\ncb_failur_rate = 0.3\n",
            ":3:1: [systems.sber]: ",
            "did you mean `cb_failure_rate`?",
        ),
        (
            "[systems.sber]\nread_timeout = 40\n",
            ":2:16: [systems.sber] `read_timeout`: ",
            "is not less than `total_timeout`",
        ),
        (
            "[defaults]\nmax_connections = 0\n[systems.sber]\n",
            ":2:19: [systems.sber] `max_connections`: ",
            "comes from the `[defaults]` table",
        ),
    ] {
        let path = file("bad.toml", text);
        let output = bin()
            .args(["check".as_ref(), path.as_os_str()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{text:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("{}{line_col}", path.display())),
            "{text:?}: {stderr}"
        );
        assert!(stderr.contains(says), "{text:?}: {stderr}");
    }
}

#[test]
fn systems_the_binary_calls_must_be_there() {
    bin()
        .args(["check", DEMO, "--systems", "sber,customer"])
        .assert()
        .code(0);
    bin()
        .args(["check", DEMO, "--systems", "sber,fx_rates"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("missing `[systems.fx_rates]`"));
}

#[test]
fn env_applies_the_process_overrides_only_when_asked() {
    bin()
        .args(["check", DEMO])
        .env("CLIENT_SBER__CB_FAILURE_RATE", "2")
        .assert()
        .code(0);
    let startup = Loader::new()
        .env([("CLIENT_SBER__CB_FAILURE_RATE", "2")])
        .read(DEMO)
        .unwrap_err();
    bin()
        .args(["check", DEMO, "--env"])
        .env("CLIENT_SBER__CB_FAILURE_RATE", "2")
        .assert()
        .code(1)
        .stderr(format!("{startup}\n"))
        .stderr(predicate::str::starts_with(
            "environment variable `CLIENT_SBER__CB_FAILURE_RATE`: ",
        ));
}

#[test]
fn usage_errors_exit_2() {
    bin().assert().code(2);
    bin().args(["check"]).assert().code(2);
    bin().args(["check", DEMO, "--frobnicate"]).assert().code(2);
    // Runs too large to finish in seconds, and intervals too short, are refused.
    for args in [
        ["--duration", "1000000000s"],
        ["--every", "0"],
        ["--warm", "4000000000"],
    ] {
        bin()
            .args(["simulate", DEMO])
            .args(args)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("at least 1ms")
                    .or(predicate::str::contains("at most 200000")),
            );
    }
    bin()
        .args(["simulate", DEMO, "--every", "soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("with a unit"));
    bin()
        .args(["simulate", DEMO, "--scenario", "meteor"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("hang"));
    bin()
        .args(["simulate", DEMO, "--system", "fx_rates"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no `[systems.fx_rates]`"));
    bin()
        .args(["simulate", DEMO, "--compare", "cb_failure_rat=0.3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no key `cb_failure_rat`"));
    bin()
        .args(["simulate", DEMO, "--compare", "cb_failure_rate=3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at most 1"));
    bin()
        .args(["simulate", DEMO, "--rate", "1.5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at most 1"));
}

#[test]
fn a_missing_file_is_named() {
    bin()
        .args(["check", "/nonexistent/resilience.toml"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "/nonexistent/resilience.toml: cannot read the settings file",
        ));
}

#[test]
fn explain_names_every_values_origin() {
    let text = "[defaults]\nread_timeout = \"20s\"\n\n[systems.sber]\nbase_url = \"https://pay:s3cret@sber.test/api?key=abc\"\ncb_failure_rate = 0.3\n";
    let path = file("explain.toml", text);
    let output = bin()
        .args(["explain".as_ref(), path.as_os_str(), "--env".as_ref()])
        .env("CLIENT_SBER__MAX_CONNECTIONS", "20")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let out = String::from_utf8(output.stdout).unwrap();
    let line = |key: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no line for {key}:\n{out}"))
            .to_owned()
    };
    let file = path.display().to_string();
    assert!(line("cb_failure_rate").contains("= 0.3 "), "{out}");
    assert!(
        line("cb_failure_rate").contains(&format!("{file}:6:19 [systems.sber]")),
        "{out}"
    );
    assert!(
        line("read_timeout").contains(&format!("{file}:2:16 [defaults]")),
        "{out}"
    );
    assert!(
        line("max_connections").contains("environment variable CLIENT_SBER__MAX_CONNECTIONS"),
        "{out}"
    );
    assert!(line("max_connections").contains("= 20 "), "{out}");
    assert!(
        line("cb_slow_threshold").contains("10s")
            && line("cb_slow_threshold").contains("derived: read_timeout / 2"),
        "{out}"
    );
    assert!(
        line("max_keepalive").contains("24") && line("max_keepalive").contains("derived"),
        "{out}"
    );
    assert!(
        line("(bulkhead permits)").contains("16")
            && line("(bulkhead permits)").contains("max_connections × 0.8"),
        "{out}"
    );
    assert!(
        line("cb_window_size").contains("the guide's default"),
        "{out}"
    );
    // Credentials are masked; the rest of the address is shown.
    assert!(!out.contains("s3cret") && !out.contains("abc"), "{out}");
    assert!(
        line("base_url").contains("https://pay:***@sber.test/api?key=***"),
        "{out}"
    );
}

#[test]
fn explain_marks_the_values_that_restate_the_guides_defaults() {
    // The newcomer's table: eleven keys at the guide's values (one of them a derived
    // default, `cb_slow_threshold = read_timeout / 2`), one that is not, an address,
    // and a default restated by an environment variable.
    let text = "[defaults]\ncb_window_size = 50\n\n[systems.sber]\nbase_url = \"http://127.0.0.1:8081\"\nconnect_timeout = 2\nread_timeout = \"10s\"\ntotal_timeout = 35\ncb_min_calls = 10\ncb_failure_rate = 0.3\ncb_open_duration = \"30s\"\ncb_half_open_calls = 3\ncb_slow_threshold = \"5s\"\nmax_connections = 10\nmax_keepalive = 12\n\n[systems.customer]\ncb_slow_threshold = \"16s\"\n";
    let path = file("restated.toml", text);
    let output = bin()
        .args(["explain".as_ref(), path.as_os_str(), "--env".as_ref()])
        .env("CLIENT_SBER__CB_MODE", "auto")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    let (customer, sber) = out.split_once("[systems.sber]").unwrap();
    let line = |block: &str, key: &str| {
        block
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no line for {key}:\n{out}"))
            .to_owned()
    };
    for key in [
        "connect_timeout",
        "total_timeout",
        "cb_window_size",
        "cb_min_calls",
        "cb_open_duration",
        "cb_half_open_calls",
        "max_connections",
        "max_keepalive",
        "cb_mode",
    ] {
        assert!(line(sber, key).contains(" (default) "), "{key}:\n{out}");
    }
    // Derived from the value read_timeout has here: 10s / 2.
    assert!(
        line(sber, "cb_slow_threshold").contains("= 5s (default) "),
        "{out}"
    );
    assert!(
        line(customer, "cb_slow_threshold").contains("= 16s "),
        "{out}"
    );
    assert!(
        !line(customer, "cb_slow_threshold").contains("(default)"),
        "{out}"
    );
    // Not the guide's: 10s instead of 30s, 0.3 instead of 0.5; an address has no default.
    for key in ["read_timeout", "cb_failure_rate", "base_url"] {
        assert!(!line(sber, key).contains("(default)"), "{key}:\n{out}");
    }
    // Values the guide gave are not marked: nothing restates them.
    assert!(!line(sber, "bulkhead_wait").contains("(default)"), "{out}");
    // Thirteen keys set for sber (the [defaults] one and the variable included), ten of
    // them restating the guide; customer has the `[defaults]` one and its own.
    assert!(
        sber.contains(
            "  10 of 13 keys set restate the guide's defaults (marked `(default)`: deleting them changes nothing)\n"
        ),
        "{out}"
    );
    assert!(
        customer.contains("  1 of 2 keys set restate the guide's defaults"),
        "{out}"
    );
}

#[test]
fn explain_of_an_invalid_file_fails_as_check_does() {
    let path = file("explain-bad.toml", "[systems.sber]\ncb_min_calls = 0\n");
    let startup = Settings::from_path(&path, &[]).unwrap_err();
    bin()
        .args(["explain".as_ref(), path.as_os_str()])
        .assert()
        .code(1)
        .stderr(format!("{startup}\n"));
}

/// Every line dropped, every line doubled, the file cut at many places and characters
/// swapped for TOML's special ones: `check` says valid or invalid (exit 0 or 1), names
/// the file, and never panics.
#[test]
fn check_over_mangled_files_never_panics() {
    let text = std::fs::read_to_string(DEMO).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut variants = Vec::new();
    for i in 0..lines.len() {
        let mut dropped = lines.clone();
        dropped.remove(i);
        variants.push(dropped.join("\n"));
        let mut doubled = lines.clone();
        doubled.insert(i, lines[i]);
        variants.push(doubled.join("\n"));
    }
    let chars: Vec<char> = text.chars().collect();
    for cut in (0..chars.len()).step_by(17) {
        variants.push(chars[..cut].iter().collect());
    }
    for (i, special) in (0..chars.len())
        .step_by(23)
        .zip("[]=\"'.#\n0\u{0}é{}".chars().cycle())
    {
        let mut mangled = chars.clone();
        mangled[i] = special;
        variants.push(mangled.into_iter().collect());
    }
    let path = file("mangled.toml", "");
    for variant in variants {
        std::fs::write(&path, &variant).unwrap();
        let output = bin()
            .args(["check".as_ref(), path.as_os_str()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        match output.status.code() {
            Some(0) => assert!(stderr.is_empty(), "{variant:?}: {stderr}"),
            Some(1) => assert!(
                stderr.starts_with(&path.display().to_string()),
                "{variant:?}: {stderr}"
            ),
            other => panic!("{variant:?}: exit {other:?}: {stderr}"),
        }
        // The binary's verdict is the library's.
        assert_eq!(
            output.status.code() == Some(0),
            Settings::from_path(&path, &[]).is_ok(),
            "{variant:?}"
        );
    }
}

/// Runs the binary with `args` and `env`, and checks that neither stream shows the
/// password or the query value of the `base_url`s used below.
fn assert_output_masked(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut command = bin();
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(
            !text.contains("hunter2") && !text.contains("t0k3n"),
            "{args:?} shows a secret on {stream}: {text}"
        );
    }
    (stdout, stderr)
}

#[test]
fn check_and_explain_never_print_credentials() {
    let good = file(
        "secret-good.toml",
        "[systems.sber]\nbase_url = \"http://svc-user:hunter2@pay.example/api?token=t0k3n\"\n",
    );
    let bad = file(
        "secret-bad.toml",
        "[systems.sber]\nbase_url = \"ftp://svc-user:hunter2@pay.example/api?token=t0k3n\"\n",
    );
    let good = good.to_str().unwrap();
    let bad = bad.to_str().unwrap();
    let (out, _) = assert_output_masked(&["explain", good], &[]);
    assert!(
        out.contains("http://svc-user:***@pay.example/api?token=***"),
        "{out}"
    );
    assert_output_masked(&["check", good], &[]);
    let (_, err) = assert_output_masked(&["check", bad], &[]);
    assert!(err.contains("ftp://svc-user:***@"), "{err}");
    assert_output_masked(&["explain", bad], &[]);
    let override_ = [(
        "CLIENT_SBER__BASE_URL",
        "ftp://u:hunter2@pay.example/?token=t0k3n",
    )];
    let (_, err) = assert_output_masked(&["check", good, "--env"], &override_);
    assert!(err.contains("CLIENT_SBER__BASE_URL"), "{err}");
    assert_output_masked(&["explain", good, "--env"], &override_);
    let valid_override = [(
        "CLIENT_SBER__BASE_URL",
        "https://u:hunter2@other.example/?token=t0k3n",
    )];
    let (out, _) = assert_output_masked(&["explain", good, "--env"], &valid_override);
    assert!(
        out.contains("https://u:***@other.example/?token=***"),
        "{out}"
    );
}

#[test]
fn the_adaptive_bulkheads_keys_are_checked_and_explained() {
    // A floor above the bulkhead's permits (max_connections 5: 4 permits) is refused,
    // on its line, as a service's startup refuses it.
    let text = "[systems.sber]\nmax_connections = 5\nbulkhead = \"adaptive\"\nbulkhead_floor = 5\n";
    let path = file("floor-above.toml", text);
    let startup = Settings::from_path(&path, &[]).unwrap_err();
    assert_eq!(startup.kind(), ErrorKind::Order);
    assert!(
        startup.to_string().contains(":4:") && startup.to_string().contains("`bulkhead_floor`"),
        "{startup}"
    );
    bin()
        .args(["check".as_ref(), path.as_os_str()])
        .assert()
        .code(1)
        .stderr(format!("{startup}\n"));
    // `explain` shows both keys: the file's floor, the environment's mode.
    let path = file("adaptive.toml", "[systems.sber]\nbulkhead_floor = 2\n");
    let output = bin()
        .args(["explain".as_ref(), path.as_os_str(), "--env".as_ref()])
        .env("CLIENT_SBER__BULKHEAD", "adaptive")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    let line = |key: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no line for {key}:\n{out}"))
            .to_owned()
    };
    assert!(line("bulkhead").contains("= adaptive "), "{out}");
    assert!(line("bulkhead").contains("CLIENT_SBER__BULKHEAD"), "{out}");
    assert!(line("bulkhead_floor").contains("= 2"), "{out}");
}
