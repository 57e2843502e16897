//! `Guards::watch`: the settings file reloaded when it changes, written in place or
//! replaced as a Kubernetes `ConfigMap` volume replaces it (a `..data` symlink swap).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use outbound_guard::{Guards, Settings};

mod common;
use common::without_log;

/// A scratch directory of this test's own, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("og-watch-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn file(open: u64) -> String {
    format!("[systems.sber]\ncb_open_duration = {open}\n[systems.customer]\n")
}

/// Waits up to five seconds for sber's `cb_open_duration` to be `secs`.
fn wait_for(guards: &Guards, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if guards.get("sber").unwrap().settings().cb_open_duration() == Duration::from_secs(secs) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn start(path: &Path) -> Guards {
    let settings = Settings::from_path(path, &["sber", "customer"]).unwrap();
    without_log(Guards::builder(&settings)).build()
}

#[test]
fn a_file_written_in_place_is_reloaded() {
    let scratch = Scratch::new("in-place");
    let path = scratch.0.join("resilience.toml");
    std::fs::write(&path, file(30)).unwrap();
    let guards = start(&path);
    let watcher = guards.watch(&path).unwrap();
    std::fs::write(&path, file(7)).unwrap();
    assert!(wait_for(&guards, 7), "the new file was not applied");
    // An invalid version changes nothing; the next valid one is applied.
    std::fs::write(
        &path,
        "[systems.sber]\ncb_open_duration = -1\n[systems.customer]\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(wait_for(&guards, 7));
    std::fs::write(&path, file(9)).unwrap();
    assert!(wait_for(&guards, 9));
    // Once the watcher is dropped, nothing more is applied.
    drop(watcher);
    std::fs::write(&path, file(11)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(wait_for(&guards, 9));
}

/// The layout of a `ConfigMap` volume: `resilience.toml -> ..data/resilience.toml`,
/// `..data -> ..2026_12_03_v1`; an update writes a new version directory and renames a
/// new `..data` symlink over the old one.
#[test]
fn a_configmap_update_through_the_data_symlink_swap_is_reloaded() {
    use std::os::unix::fs::symlink;

    let scratch = Scratch::new("configmap");
    let dir = &scratch.0;
    let version = |name: &str, open: u64| {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join("resilience.toml"), file(open)).unwrap();
    };
    version("..v1", 30);
    symlink("..v1", dir.join("..data")).unwrap();
    symlink("..data/resilience.toml", dir.join("resilience.toml")).unwrap();
    let path = dir.join("resilience.toml");
    let guards = start(&path);
    let _watcher = guards.watch(&path).unwrap();

    version("..v2", 7);
    symlink("..v2", dir.join("..data_tmp")).unwrap();
    std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).unwrap();
    std::fs::remove_dir_all(dir.join("..v1")).unwrap();
    assert!(wait_for(&guards, 7), "the swapped version was not applied");
}

#[test]
fn a_directory_that_does_not_exist_cannot_be_watched_and_says_which() {
    let scratch = Scratch::new("missing");
    let path = scratch.0.join("nowhere").join("resilience.toml");
    let settings = Settings::parse(&file(30), "inline").unwrap();
    let guards = without_log(Guards::builder(&settings)).build();
    let err = guards.watch(&path).unwrap_err();
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}
