//! Editing `resilience.toml` rebuilds the crate that the attribute checked against it:
//! no stale green build. A small crate of its own is built three times with cargo —
//! as written, after its settings lose the annotated system (the build must now fail,
//! naming it), and after the file is restored (green again).

use std::path::Path;
use std::process::{Command, Output};

use resilience_ui_tests::{target_dir, workspace};

const LIB: &str = r#"
use resilience::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(resilience::Guarded)]
pub struct Adapter {
    guard: resilience::Guard,
}

impl Adapter {
    #[resilience::circuit_breaker(system = "sber", error_map = PortError::unavailable)]
    pub async fn register(&self) -> Result<(), PortError> {
        Ok(())
    }
}
"#;

fn build(project: &Path, target: &Path) -> Output {
    Command::new(env!("CARGO"))
        .arg("build")
        .arg("--offline")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo")
}

#[test]
fn editing_the_settings_file_rebuilds_the_crate() {
    let root = target_dir().join("tests/rebuild");
    let project = root.join("service");
    let target = root.join("target");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let runtime = workspace().join("runtime");
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rebuild-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\nresilience = {{ path = {:?} }}\n\n[workspace]\n",
            runtime.display().to_string()
        ),
    )
    .unwrap();
    // The workspace's lock file, so the offline build uses the versions already fetched.
    std::fs::copy(workspace().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    std::fs::write(project.join("src/lib.rs"), LIB).unwrap();
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
