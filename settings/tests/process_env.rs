//! `Settings::load` reads the real process environment. The only test in its binary, so
//! setting variables here races with nothing.
#![cfg(unix)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use outbound_guard_settings::{ErrorKind, Settings};

#[test]
fn the_process_environment_is_read_and_only_our_variables_must_be_unicode() {
    let not_unicode = OsStr::from_bytes(b"\xff\xfe");
    // Another program's variables, even not Unicode, are left alone.
    std::env::set_var("CLIENT_CERT", not_unicode);
    std::env::set_var("CLIENT_SBER__CB_FAILURE_RATE", "0.3");
    let settings = Settings::load("[systems.sber]", "resilience.toml").unwrap();
    assert_eq!(settings.system("sber").unwrap().cb_failure_rate(), 0.3);

    // One of ours that is not Unicode stops startup, naming it.
    std::env::set_var("CLIENT_SBER__READ_TIMEOUT", not_unicode);
    let err = Settings::load("[systems.sber]", "resilience.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert_eq!(err.variable_name(), Some("CLIENT_SBER__READ_TIMEOUT"));
    assert!(err.to_string().contains("valid UTF-8"), "{err}");
}
