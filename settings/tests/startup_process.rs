//! Startup in a real process with a hostile environment: the application's own
//! `CLIENT_*` secrets (one not even Unicode), a typo of one of our keys, a file mounted
//! at run time that lacks a compiled-in system. The test binary runs itself as the
//! child (`STARTUP_CHILD=1`), whose "main" loads the settings as a service would.
#![cfg(unix)]

use std::error::Error;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output};

use outbound_guard_settings::{Loader, PATH_VARIABLE};

/// The compiled-in file.
const COMPILED: &str = "[systems.sber]\ncb_failure_rate = 0.30\n[systems.customer]\n";
/// The systems the "binary" calls.
const SYSTEMS: [&str; 2] = ["sber", "customer"];

/// The service's startup, as `fn main() -> Result<(), Box<dyn Error>>` writes it.
fn service_main() -> Result<(), Box<dyn Error>> {
    let settings = Loader::new()
        .require_systems(SYSTEMS)
        .parse_or_mounted(COMPILED, "resilience.toml")?;
    let sber = settings.system("sber").unwrap();
    println!(
        "started: {} from {} (sber cb_failure_rate {})",
        settings.names().collect::<Vec<_>>().join(","),
        settings.origin(),
        sber.cb_failure_rate()
    );
    Ok(())
}

#[test]
fn child() {
    if std::env::var_os("STARTUP_CHILD").is_none() {
        return;
    }
    // What the standard library's `Termination` does for `main`'s error.
    let code = match service_main() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e:?}");
            1
        }
    };
    std::process::exit(code);
}

fn run(vars: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child", "--nocapture", "--test-threads=1"]);
    // Whatever the machine has under our prefix is not part of the test.
    for (name, _) in std::env::vars_os() {
        let name_bytes = name.as_bytes();
        if name_bytes.starts_with(b"CLIENT_") || name == PATH_VARIABLE {
            command.env_remove(&name);
        }
    }
    command.env("STARTUP_CHILD", "1");
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

/// The application's secrets under the prefix, one not Unicode.
fn hostile() -> Vec<(&'static str, &'static std::ffi::OsStr)> {
    vec![
        ("CLIENT_PAYMENTS_TOKEN", os("xyz")),
        ("CLIENT_STRIPE__API_KEY", os("k")),
        ("CLIENT_PAYMENTS__API_KEY", os("k")),
        ("CLIENT_ID", os("42")),
        ("CLIENT_SBER__API_KEY", os("secret")),
        ("CLIENT_CERT", std::ffi::OsStr::from_bytes(b"\xff\xfe")),
    ]
}

#[test]
fn a_service_starts_among_the_applications_own_client_variables() {
    let mut vars = hostile();
    vars.push(("CLIENT_SBER__CB_FAILURE_RATE", os("0.5")));
    let out = run(&vars);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("started: customer,sber from resilience.toml (sber cb_failure_rate 0.5)"),
        "{stdout}"
    );
}

#[test]
fn a_typo_of_one_of_our_keys_stops_startup_with_a_readable_line() {
    let mut vars = hostile();
    vars.push(("CLIENT_SBER__CB_FAILUR_RATE", os("0.5")));
    let out = run(&vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Error: environment variable `CLIENT_SBER__CB_FAILUR_RATE`: no key `cb_failur_rate`; did you mean `CLIENT_SBER__CB_FAILURE_RATE`?\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("SettingsError {"), "{stderr}");
}

#[test]
fn a_mounted_file_missing_a_compiled_system_stops_startup_naming_it() {
    let dir = std::env::temp_dir().join(format!("resilience-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resilience.toml");
    std::fs::write(&path, "[systems.sber]\n").unwrap();
    let mut vars = hostile();
    vars.push((PATH_VARIABLE, path.as_os_str()));
    let out = run(&vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "Error: {}: missing `[systems.customer]`",
            path.display()
        )),
        "{stderr}"
    );

    // The full file starts.
    std::fs::write(&path, "[systems.sber]\n[systems.customer]\n").unwrap();
    let out = run(&vars);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("from {}", path.display())),
        "{stdout}"
    );
}
