//! Which `CLIENT_*` variables are ours: a variable is ours when its key part (after
//! `CLIENT_<SYSTEM>__`) is one of our keys or a near miss of one; then its system must
//! exist. Everything else under the prefix belongs to the application.

use outbound_guard_settings::{ErrorKind, Loader, Settings};

const FILE: &str = "[systems.sber]\n[systems.customer]\n";
const ORIGIN: &str = "resilience.toml";

fn load(vars: &[(&str, &str)]) -> Result<Settings, outbound_guard_settings::SettingsError> {
    Settings::load_with_env(FILE, ORIGIN, vars.iter().copied())
}

#[test]
fn the_applications_own_client_variables_are_left_alone() {
    let settings = load(&[
        ("CLIENT_PAYMENTS_TOKEN", "xyz"),
        ("CLIENT_STRIPE__API_KEY", "k"),
        ("CLIENT_PAYMENTS__API_KEY", "k"),
        ("CLIENT_ID", "42"),
        // A system of ours with a key that is not ours: the application's too (the
        // guide's settings class keeps a client's other fields under this prefix).
        ("CLIENT_SBER__API_KEY", "secret"),
        ("CLIENT_SBER__TOKEN", "secret"),
        ("CLIENT_SBER_TOKEN", "secret"),
        ("CLIENT_SBER__READ_TOKEN", "secret"),
        ("CLIENT_SBER__CB_FAILURE_RATE", "0.3"),
    ])
    .unwrap();
    assert_eq!(settings.system("sber").unwrap().cb_failure_rate(), 0.3);
}

#[test]
fn a_key_of_ours_for_an_unknown_system_stops_startup_with_a_did_you_mean() {
    let err = load(&[("CLIENT_SBR__CB_FAILURE_RATE", "0.5")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownSystem);
    assert_eq!(err.variable_name(), Some("CLIENT_SBR__CB_FAILURE_RATE"));
    assert_eq!(err.system_name(), Some("sbr"));
    assert!(
        err.message()
            .contains("did you mean `CLIENT_SBER__CB_FAILURE_RATE`?"),
        "{err}"
    );
    // Without a near system: still ours, still an error, listing the systems.
    let err = load(&[("CLIENT_STRIPE__READ_TIMEOUT", "5")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownSystem);
    assert!(err.message().contains("`customer`, `sber`"), "{err}");
}

#[test]
fn a_near_miss_of_a_key_stops_startup_with_a_did_you_mean_in_one_spelling() {
    let err = load(&[("CLIENT_SBER__CB_FAILUR_RATE", "0.5")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey);
    assert_eq!(err.system_name(), Some("sber"));
    assert_eq!(
        err.to_string(),
        "environment variable `CLIENT_SBER__CB_FAILUR_RATE`: no key `cb_failur_rate`; did you mean `CLIENT_SBER__CB_FAILURE_RATE`?"
    );
    // Near misses of both: the system is reported.
    let err = load(&[("CLIENT_SBR__CB_FAILUR_RATE", "0.5")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownSystem);
}

#[test]
fn a_single_underscore_between_a_system_and_a_key_is_a_mistake() {
    let err = load(&[("CLIENT_SBER_CB_FAILURE_RATE", "0.5")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert_eq!(err.system_name(), Some("sber"));
    assert!(
        err.message()
            .contains("did you mean `CLIENT_SBER__CB_FAILURE_RATE`?"),
        "{err}"
    );
}

#[test]
fn the_prefix_is_configurable() {
    let loader = || {
        Loader::new().prefix("PAYMENTS_").env([
            ("PAYMENTS_SBER__READ_TIMEOUT", "10"),
            // Under the default prefix, now nobody's business of ours.
            ("CLIENT_SBR__CB_FAILURE_RATE", "0.5"),
            ("PAYMENTS_TOKEN", "t"),
        ])
    };
    let settings = loader().parse(FILE, ORIGIN).unwrap();
    let sber = settings.system("sber").unwrap();
    assert_eq!(sber.read_timeout().as_secs(), 10);

    let err = Loader::new()
        .prefix("PAYMENTS_")
        .env([("PAYMENTS_SBR__READ_TIMEOUT", "10")])
        .parse(FILE, ORIGIN)
        .unwrap_err();
    assert!(
        err.message()
            .contains("did you mean `PAYMENTS_SBER__READ_TIMEOUT`?"),
        "{err}"
    );

    for bad in ["", "client_", "CLIENT-"] {
        let err = Loader::new()
            .prefix(bad)
            .env([("X", "y")])
            .parse(FILE, ORIGIN)
            .unwrap_err();
        assert!(err.message().contains("prefix"), "{err}");
    }
}
