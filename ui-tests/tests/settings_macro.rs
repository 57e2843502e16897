//! `settings!()` loads the crate's own settings file, the one the attributes of this
//! crate were checked against: compiled in, found by the same lookup.

use std::time::Duration;

#[test]
fn settings_loads_the_file_the_attributes_check_against() {
    let vars = [("CLIENT_SBER__READ_TIMEOUT", "4s")];
    let settings = outbound_guard::settings!(env = vars).unwrap();
    assert_eq!(settings.names().collect::<Vec<_>>(), ["customer", "sber"]);
    let sber = settings.system("sber").unwrap();
    // From `ui-tests/resilience.toml`, and from the environment given.
    assert!((sber.cb_failure_rate() - 0.30).abs() < 1e-12);
    assert_eq!(sber.read_timeout(), Duration::from_secs(4));
}
