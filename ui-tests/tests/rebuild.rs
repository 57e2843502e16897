//! Editing `resilience.toml` rebuilds the crate that the attribute checked against it:
//! no stale green build. A small crate of its own is built three times with cargo —
//! as written, after its settings lose the annotated system (the build must now fail,
//! naming it), and after the file is restored (green again).

use outbound_guard_ui_tests::{cargo_build as build, scratch_crate};

const LIB: &str = r#"
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}
"#;

#[test]
fn editing_the_settings_file_rebuilds_the_crate() {
    let (project, target) = scratch_crate("rebuild", LIB);
    let settings = project.join("resilience.toml");

    std::fs::write(&settings, "[systems.sber]\n").unwrap();
    let first = build(&project, &target);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );

    std::fs::write(&settings, "[systems.sberbank]\n").unwrap();
    let edited = build(&project, &target);
    let stderr = String::from_utf8_lossy(&edited.stderr);
    assert!(!edited.status.success(), "a stale build passed:\n{stderr}");
    assert!(
        stderr.contains("no system `sber`") && stderr.contains("did you mean `sberbank`?"),
        "{stderr}"
    );

    std::fs::write(&settings, "[systems.sber]\n").unwrap();
    let restored = build(&project, &target);
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
}
