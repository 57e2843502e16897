//! A generic `#[adapter]` block checks its system in each guarded method, where the
//! method is instantiated: a `const _` item beside the block cannot name the block's
//! parameters. So the check is made by `cargo build` (not `cargo check`), for every
//! method the crate uses; this builds a crate that uses one.

use outbound_guard_ui_tests::{cargo_build, scratch_crate};

const LIB: &str = r#"
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "customer")]
pub struct Adapter<T> {
    guard: outbound_guard::Guard,
    transport: T,
}

#[outbound_guard::adapter(system = "SYSTEM", error_map = PortError::unavailable)]
impl<T: Sync> Adapter<T> {
    pub async fn register(&self) -> Result<(), PortError> {
        let _ = &self.transport;
        Ok(())
    }

    pub async fn confirm(&self) -> Result<(), PortError> {
        Ok(())
    }
}

pub fn poll(adapter: &Adapter<()>) {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let _ = std::pin::pin!(adapter.register()).as_mut().poll(&mut cx);
    let _ = std::pin::pin!(adapter.confirm()).as_mut().poll(&mut cx);
}
"#;

fn build(system: &str) -> (bool, String) {
    let name = format!("generic-block-{system}");
    let lib = LIB.replace("SYSTEM", system).replace(
        "pub fn poll",
        "use std::future::Future as _;\n\npub fn poll",
    );
    let (project, target) = scratch_crate(&name, &lib);
    std::fs::write(
        project.join("resilience.toml"),
        "[systems.sber]\n[systems.customer]\n",
    )
    .unwrap();
    let build = cargo_build(&project, &target);
    (
        build.status.success(),
        String::from_utf8_lossy(&build.stderr).into_owned(),
    )
}

#[test]
fn a_generic_block_of_another_system_fails_to_build_naming_both() {
    let (built, stderr) = build("sber");
    assert!(!built, "a mismatched generic block built:\n{stderr}");
    assert!(
        stderr.contains(
            "this `#[outbound_guard::adapter]` block calls `sber`, but `Adapter`'s `#[guarded(system = …)]` says `customer`"
        ),
        "{stderr}"
    );
    // One error per guarded method the crate instantiates, each on the block's system.
    let errors = stderr.matches("error[E0080]").count();
    assert_eq!(errors, 2, "{stderr}");
    assert_eq!(
        stderr.matches("block calls `sber`").count(),
        errors,
        "{stderr}"
    );
}

#[test]
fn a_generic_block_of_its_own_system_builds() {
    let (built, stderr) = build("customer");
    assert!(built, "{stderr}");
}
