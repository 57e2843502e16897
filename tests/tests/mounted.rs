//! `settings!()` in a real process with a file mounted at run time through
//! `RESILIENCE_SETTINGS`: the file's values are the guard's, a missing file or a file
//! without a system this binary calls stops startup with an error naming it. The
//! systems "this binary calls" are collected at link time from two crates: this crate's
//! library (its adapters' attributes) and this test binary (`calls!`).
#![cfg(unix)]

use std::error::Error;
use std::process::{Command, Output};

use outbound_guard::{Guard, Guards};
use outbound_guard_tests::adapters::{CustomerAdapter, SberAdapter};

// The soak's system is reached by name only (`Guards::get`): declared here.
outbound_guard::calls!("soak");

/// The service's startup, as the README writes it.
fn service_main() -> Result<(), Box<dyn Error>> {
    let settings = outbound_guard::settings!()?;
    let guards = Guards::new(&settings);
    let sber = guards.get("sber")?;
    println!(
        "started from {}: sber cb_open_duration {:?}",
        settings.origin(),
        sber.settings().cb_open_duration()
    );
    Ok(())
}

#[test]
fn child() {
    if std::env::var_os("MOUNTED_CHILD").is_none() {
        return;
    }
    let code = match service_main() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn run(mounted: Option<&std::path::Path>) -> (bool, String, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child", "--nocapture", "--test-threads=1"]);
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("CLIENT_") || text == "RESILIENCE_SETTINGS" {
            command.env_remove(&name);
        }
    }
    command.env("MOUNTED_CHILD", "1");
    if let Some(path) = mounted {
        command.env("RESILIENCE_SETTINGS", path);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().unwrap();
    (
        status.success(),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// A scratch directory of this test's own, removed at the end.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("og-mounted-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, text: &str) -> std::path::PathBuf {
        let path = self.0.join("resilience.toml");
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ALL: &str = "[systems.sber]\ncb_open_duration = 7\n[systems.customer]\n[systems.soak]\n[systems.upstream]\n";

#[test]
fn without_a_mounted_file_the_compiled_in_one_is_in_effect() {
    let (ok, stdout, stderr) = run(None);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("started from resilience.toml (compiled in): sber cb_open_duration 30s"),
        "{stdout}"
    );
}

#[test]
fn the_mounted_file_is_in_effect() {
    let scratch = Scratch::new("ok");
    let path = scratch.file(ALL);
    let (ok, stdout, stderr) = run(Some(&path));
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "started from {}: sber cb_open_duration 7s",
            path.display()
        )),
        "{stdout}"
    );
}

#[test]
fn a_missing_mounted_file_stops_startup_naming_it() {
    let scratch = Scratch::new("missing");
    let path = scratch.0.join("nowhere.toml");
    let (ok, stdout, stderr) = run(Some(&path));
    assert!(!ok, "{stdout}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("RESILIENCE_SETTINGS"), "{stderr}");
}

#[test]
fn a_mounted_file_without_a_called_system_stops_startup_naming_it() {
    let scratch = Scratch::new("lacking");
    let path = scratch.file(&ALL.replace("[systems.upstream]\n", ""));
    let (ok, stdout, stderr) = run(Some(&path));
    assert!(!ok, "{stdout}");
    assert!(stderr.contains("[systems.upstream]"), "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    // What declared it: the compiled-in file's table (and the adapter's
    // `#[circuit_breaker]` when the linker kept its record, which depends on the build).
    assert!(
        stderr.contains("this binary calls it, declared by "),
        "{stderr}"
    );
    assert!(
        stderr.contains("its table in `resilience.toml (compiled in)`"),
        "{stderr}"
    );
}

#[test]
fn the_called_systems_are_collected_from_every_crate_of_the_binary() {
    // A library's entries are linked with the code of it the binary uses, as a service
    // uses its adapters: an adapter crate linked but never used is not called either.
    let sber: fn(Guard, &str) -> SberAdapter = SberAdapter::new;
    let customer: fn(Guard, &str) -> CustomerAdapter = CustomerAdapter::new;
    std::hint::black_box((sber, customer));
    let called: Vec<&str> = outbound_guard::__private::CALLED_SYSTEMS
        .iter()
        .map(|c| c.system)
        .collect();
    // This crate's library: `#[circuit_breaker]` methods of its adapters.
    for system in ["sber", "customer"] {
        assert!(called.contains(&system), "{system} not in {called:?}");
    }
    // This test binary: `calls!`.
    assert!(called.contains(&"soak"), "{called:?}");
}
