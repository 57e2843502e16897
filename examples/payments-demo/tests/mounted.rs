//! The demo binary started from a mounted settings file (`RESILIENCE_SETTINGS`): a file
//! without a system the service calls, or a path that does not exist, stops it before
//! anything runs, with an error naming the system or the path.
#![cfg(unix)]

use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("demo-mounted-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(mounted: &std::path::Path) -> (bool, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_payments-demo"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CLIENT_") {
            command.env_remove(&name);
        }
    }
    command.env("RESILIENCE_SETTINGS", mounted);
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_mounted_file_without_the_customer_system_stops_the_demo_naming_it() {
    let dir = scratch("lacking");
    let path = dir.join("resilience.toml");
    std::fs::write(&path, "[systems.sber]\ncb_failure_rate = 0.3\n").unwrap();
    let (ok, stderr) = run(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok);
    // The demo's own override for customer's base_url is the first to find it missing.
    assert!(
        stderr.contains("missing `[systems.customer]`") || stderr.contains("no system `customer`"),
        "{stderr}"
    );
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
}

#[test]
fn a_mounted_path_that_does_not_exist_stops_the_demo_naming_it() {
    let dir = scratch("missing");
    let path = dir.join("nowhere.toml");
    let (ok, stderr) = run(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok);
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("RESILIENCE_SETTINGS"), "{stderr}");
}
