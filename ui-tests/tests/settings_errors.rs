//! A mistake in `resilience.toml` is reported by every expansion that checks against the
//! file (each expansion is a pure function of its input: none knows whether another
//! already said it), as one short error on that expansion's system, naming the file
//! relative to the crate.

use outbound_guard_ui_tests::{cargo_build, scratch_crate, workspace_member};

const LIB: &str = r#"
use outbound_guard::CircuitBreakerError;

pub struct PortError;

impl PortError {
    fn unavailable(_: CircuitBreakerError) -> Self {
        PortError
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

impl Adapter {
    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn one(&self) -> Result<(), PortError> {
        Ok(())
    }

    #[outbound_guard::circuit_breaker(error_map = PortError::unavailable)]
    pub async fn two(&self) -> Result<(), PortError> {
        Ok(())
    }
}

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct Other {
    guard: outbound_guard::Guard,
}

#[outbound_guard::adapter(error_map = PortError::unavailable)]
impl Other {
    pub async fn three(&self) -> Result<(), PortError> {
        Ok(())
    }
}
"#;

#[test]
fn a_bad_key_is_one_error_per_checking_site() {
    let (project, target) = scratch_crate("settings-errors", LIB);
    std::fs::write(
        project.join("resilience.toml"),
        "[systems.sber]\ncb_failure_rat = 0.5\n",
    )
    .unwrap();
    let build = cargo_build(&project, &target);
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(!build.status.success(), "a bad key passed:\n{stderr}");
    let errors = stderr
        .lines()
        .filter(|l| l.starts_with("error") && !l.contains("could not compile"))
        .count();
    // The two derives, where the system is written: one error each, all the same (the
    // methods and the block name no system and read no file).
    assert_eq!(errors, 2, "one error per site expected, got:\n{stderr}");
    assert_eq!(
        stderr.matches("did you mean `cb_failure_rate`?").count(),
        errors,
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean `cb_failure_rate`?"),
        "{stderr}"
    );
    assert!(stderr.contains("resilience.toml"), "{stderr}");
    assert!(
        !stderr.contains(&*project.to_string_lossy()),
        "the file is named relative to the crate:\n{stderr}"
    );
}

/// An adapters crate of a workspace whose only settings file is the binary's
/// (`app/resilience.toml`): the error says what names the system, and the key that
/// points the crate at that file.
#[test]
fn a_missing_file_names_the_key_when_the_workspace_has_one_elsewhere() {
    let lib = r#"
#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}
"#;
    let (project, target) = workspace_member("settings-elsewhere", lib, None);
    let app = project.parent().unwrap().join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("resilience.toml"), "[systems.sber]\n").unwrap();
    let build = cargo_build(&project, &target);
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(!build.status.success(), "{stderr}");
    assert!(
        stderr.contains("`sber`, named by `#[guarded(system = …)]`, is checked against it"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "the workspace has `../app/resilience.toml`: to use it, name it in this crate's Cargo.toml, `[package.metadata.outbound-guard] settings = \"../app/resilience.toml\"`"
        ),
        "{stderr}"
    );
}
