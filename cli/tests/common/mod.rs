//! What both suites of the binary share: the demo's settings file, and the binary with
//! the tests' own `CLIENT_…` overrides kept out of its environment.

use assert_cmd::Command;

/// The demo's `resilience.toml`.
#[allow(dead_code)] // not every suite replays the demo
pub const DEMO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/payments-demo/resilience.toml"
);

/// The `outbound-guard` binary, without the environment's `CLIENT_…` variables.
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_outbound-guard"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CLIENT_") {
            command.env_remove(name);
        }
    }
    command
}
