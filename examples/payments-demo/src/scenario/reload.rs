//! The operator's reload: Sber forced open through the settings file (`cb_mode`), then
//! back, while the service serves; the file watched as a mounted `ConfigMap` is.
//!
//! The scenario never edits the file the service was started from: it watches a copy
//! of it in a scratch directory, with the same environment overrides, and edits that.

use std::path::{Path, PathBuf};
use std::time::Duration;

use outbound_guard::{SetBy, State};

use super::{Check, World};

/// A scratch directory, removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `text` with `cb_mode = "forced_open"` as the first key of `[systems.sber]`.
fn forced_open(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 32);
    let mut found = false;
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if !found && line.split('#').next().unwrap_or("").trim() == "[systems.sber]" {
            out.push_str("cb_mode = \"forced_open\"\n");
            found = true;
        }
    }
    found.then_some(out)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    // As the kubelet does: a new file renamed over the old, never a half-written one.
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

/// The phase: forced open through the file, then back to automatic.
pub(super) async fn phase(
    world: &World,
    checks: &mut Vec<Check>,
    cursor: &mut usize,
) -> Result<(), ()> {
    let guards = &world.container.guards;
    let sber = world.container.sber.system_guard();
    let customer = world.container.customers.system_guard();
    let origin = world.sber_origin();
    let text = match std::fs::read_to_string(&origin) {
        Ok(text) => text,
        Err(e) => {
            checks.push(Check::fail(
                "the settings file in effect can be read for the reload phase",
                format!("{origin}: {e}"),
            ));
            return Err(());
        }
    };
    let Some(forced) = forced_open(&text) else {
        checks.push(Check::fail(
            "the settings file in effect has a [systems.sber] table",
            origin,
        ));
        return Err(());
    };
    let dir = std::env::temp_dir().join(format!("payments-demo-{}", std::process::id()));
    let scratch = Scratch(dir.clone());
    let path = dir.join("resilience.toml");
    let prepared = std::fs::create_dir_all(&dir)
        .map_err(|e| e.to_string())
        .and_then(|()| write(&path, &text));
    let watcher = prepared.and_then(|()| guards.watch(&path).map_err(|e| e.to_string()));
    let _watcher = match watcher {
        Ok(watcher) => watcher,
        Err(e) => {
            checks.push(Check::fail("the settings file copy is watched", e));
            return Err(());
        }
    };
    // What must survive: customer's breaker and window, sber's other settings.
    let customer_before = customer.breaker().snapshot();
    let settings_before = sber.settings();

    super::enter_reload(
        world,
        "an operator sets cb_mode = \"forced_open\" for sber in the settings file",
    );
    if let Err(e) = write(&path, &forced) {
        checks.push(Check::fail("the operator's edit is written", e));
        return Err(());
    }
    world
        .expect(
            checks,
            cursor,
            "forced open through the settings file (cb_mode, reloaded by the watcher)",
            ("sber", State::Closed, State::ForcedOpen),
            Duration::from_secs(10),
        )
        .await?;
    let set_by = sber.breaker().peek().set_by;
    checks.push(Check::new(
        set_by == Some(SetBy::File),
        "the breaker says the file forced it open, not an operator's API call",
        format!("set_by {set_by:?}"),
    ));
    world.hold(Duration::from_secs(2)).await;

    super::enter_back(
        world,
        "the operator removes cb_mode: sber is automatic again",
    );
    if let Err(e) = write(&path, &text) {
        checks.push(Check::fail("the operator's edit is undone", e));
        return Err(());
    }
    world
        .expect(
            checks,
            cursor,
            "back to automatic through the settings file",
            ("sber", State::ForcedOpen, State::Closed),
            Duration::from_secs(10),
        )
        .await?;
    let customer_after = customer.breaker().snapshot();
    let settings_after = sber.settings();
    checks.push(Check::new(
        customer_after.state == State::Closed
            && customer_after.since == customer_before.since
            && customer_after.calls >= customer_before.calls.min(1),
        "the reloads kept what the breakers knew: customer's state and window untouched",
        format!(
            "customer {} since the start, window {} → {} outcomes",
            customer_after.state, customer_before.calls, customer_after.calls
        ),
    ));
    checks.push(Check::new(
        *settings_after == *settings_before,
        "sber's settings are back as they were, environment overrides included",
        format!(
            "cb_open_duration {:?}, cb_mode {}",
            settings_after.cb_open_duration(),
            settings_after.cb_mode()
        ),
    ));
    drop(scratch);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::forced_open;

    #[test]
    fn cb_mode_goes_into_the_sber_table_only() {
        let text = "[systems.sber] # payments\nbase_url = \"x\"\n[systems.customer]\n";
        let forced = forced_open(text).unwrap();
        assert_eq!(
            forced,
            "[systems.sber] # payments\ncb_mode = \"forced_open\"\nbase_url = \"x\"\n[systems.customer]\n"
        );
        assert!(forced_open("[systems.customer]\n").is_none());
    }
}
