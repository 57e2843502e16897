//! Every bad settings input yields its clear error. `settings/tests/settings.rs`
//! covers each validation rule and the main environment error paths; these are the
//! inputs it does not: TOML the parser itself rejects (overflowing numbers, dates,
//! NUL bytes, arrays of tables), odd system names, keys in the wrong case, and
//! environment variables whose name or value is malformed at the edges (empty system or
//! key, doubled separators, non-ASCII, numbers that overflow, hex).
//!
//! Each error is checked to be of the right kind, to say where the problem is (the file,
//! or the environment variable), and to say what is allowed.

use outbound_guard_settings::{ErrorKind, Settings, SettingsError};

const ORIGIN: &str = "service/resilience.toml";

fn file_error(text: &str) -> SettingsError {
    match Settings::parse(text, ORIGIN) {
        Ok(settings) => panic!("{text:?} was accepted: {settings:?}"),
        Err(error) => error,
    }
}

/// The file's error: of `kind`, naming the file first, saying `says`.
fn rejects_file(text: &str, kind: ErrorKind, says: &[&str]) -> SettingsError {
    let error = file_error(text);
    let shown = error.to_string();
    assert_eq!(error.kind(), kind, "{text:?}: {shown}");
    // The file, then the line and column of the key or value when the problem is on one.
    let place = match error.location() {
        Some(at) => format!("{ORIGIN}:{}:{}: ", at.line, at.column),
        None => format!("{ORIGIN}: "),
    };
    assert!(shown.starts_with(&place), "{shown}");
    assert!(
        error.key().is_none() || error.location().is_some(),
        "{text:?}: an error on a key of the file names its line: {shown}"
    );
    for part in says {
        assert!(
            shown.contains(part),
            "{text:?}: {shown:?} should say {part:?}"
        );
    }
    error
}

mod common;
use common::assert_names_variable;

/// The error of one environment override on `[systems.sber]`: of `kind`, naming the
/// variable first, saying `says`.
fn rejects_env(name: &str, value: &str, kind: ErrorKind, says: &[&str]) -> SettingsError {
    let error = match Settings::load_with_env("[systems.sber]\n", ORIGIN, [(name, value)]) {
        Ok(settings) => panic!("{name}={value:?} was accepted: {settings:?}"),
        Err(error) => error,
    };
    let shown = error.to_string();
    assert_eq!(error.kind(), kind, "{name}={value:?}: {shown}");
    assert_names_variable(&error, name);
    for part in says {
        assert!(
            shown.contains(part),
            "{name}={value:?}: {shown:?} should say {part:?}"
        );
    }
    error
}

#[test]
fn toml_the_parser_rejects_is_a_syntax_error_pointing_at_the_line() {
    rejects_file(
        "[systems.sber]\nread_timeout = 1e400\n",
        ErrorKind::Syntax,
        &["not valid TOML", "line 2"],
    );
    rejects_file("\0", ErrorKind::Syntax, &["not valid TOML", "line 1"]);
    rejects_file(
        "[systems.sber]\nread_timeout = \n",
        ErrorKind::Syntax,
        &["not valid TOML", "line 2"],
    );
    rejects_file(
        "[systems.sber]\n[systems.sber]\n",
        ErrorKind::Syntax,
        &["not valid TOML", "duplicate"],
    );
    rejects_file(
        "[systems.sber]\nread_timeout = 30\nread_timeout = 31\n",
        ErrorKind::Syntax,
        &["not valid TOML", "line 3"],
    );
    rejects_file("[systems.sber", ErrorKind::Syntax, &["not valid TOML"]);
    rejects_file(
        "[systems.sber]\nbase_url = \"http://x",
        ErrorKind::Syntax,
        &["not valid TOML"],
    );
}

#[test]
fn values_toml_has_but_no_key_takes_are_malformed_and_say_what_is_allowed() {
    let cases = [
        (
            "read_timeout = 1979-05-27",
            "read_timeout",
            "a number of seconds",
        ),
        (
            "total_timeout = 07:32:00",
            "total_timeout",
            "a number of seconds",
        ),
        ("cb_min_calls = 1e1", "cb_min_calls", "a whole number"),
        (
            "cb_half_open_calls = true",
            "cb_half_open_calls",
            "a whole number",
        ),
        (
            "cb_failure_rate = [0.5]",
            "cb_failure_rate",
            "a share between 0 and 1",
        ),
        ("base_url = [\"http://a\"]", "base_url", "a URL string"),
        (
            "max_connections = \"\"",
            "max_connections",
            "a whole number",
        ),
    ];
    for (line, key, says) in cases {
        let error = rejects_file(
            &format!("[systems.sber]\n{line}\n"),
            ErrorKind::Malformed,
            &[&format!("[systems.sber] `{key}`: "), says],
        );
        assert_eq!(
            error.key().map(outbound_guard_settings::Key::name),
            Some(key)
        );
        assert_eq!(error.system_name(), Some("sber"));
    }
}

#[test]
fn numbers_at_the_edges_are_out_of_range_with_the_bounds() {
    let cases = [
        (
            "cb_window_size = 9223372036854775807",
            "cb_window_size",
            "from 1 to 10000",
        ),
        (
            "cb_window_size = -9223372036854775808",
            "cb_window_size",
            "from 1 to 10000",
        ),
        ("max_keepalive = -1", "max_keepalive", "from 0 to 120000"),
        ("read_timeout = -0.0", "read_timeout", "greater than 0"),
        ("read_timeout = 1e-10", "read_timeout", "greater than 0"),
        (
            "total_timeout = \"86401s\"",
            "total_timeout",
            "at most 86400",
        ),
        ("total_timeout = 86400.5", "total_timeout", "unit mistake"),
        // A day in milliseconds is the largest unitless number taken for milliseconds
        // written without their unit; above it, a number is out of range either way.
        ("total_timeout = 86400000", "total_timeout", "unit mistake"),
        ("total_timeout = 86400001", "total_timeout", "at most 86400"),
        ("bulkhead_wait = -0.5", "bulkhead_wait", "at least 0"),
        (
            "cb_failure_rate = 1.0000001",
            "cb_failure_rate",
            "at most 1",
        ),
        (
            "cb_failure_rate = -0.0",
            "cb_failure_rate",
            "greater than 0",
        ),
        (
            "cb_open_duration = nan",
            "cb_open_duration",
            "greater than 0",
        ),
        (
            "cb_open_duration = -inf",
            "cb_open_duration",
            "greater than 0",
        ),
        ("cb_open_backoff = 0.5", "cb_open_backoff", "at least 1"),
        ("cb_open_backoff = 101", "cb_open_backoff", "at most 100"),
        ("cb_open_backoff = nan", "cb_open_backoff", "at least 1"),
        ("cb_open_jitter = -0.1", "cb_open_jitter", "at least 0"),
        ("cb_open_jitter = 1.0", "cb_open_jitter", "below 1"),
        ("cb_open_max = 0", "cb_open_max", "greater than 0"),
    ];
    for (line, key, says) in cases {
        let error = rejects_file(
            &format!("[systems.sber]\n{line}\n"),
            ErrorKind::OutOfRange,
            &[&format!("`{key}`: got "), says],
        );
        assert_eq!(
            error.key().map(outbound_guard_settings::Key::name),
            Some(key)
        );
    }
}

#[test]
fn odd_shapes_and_names_say_how_to_write_them() {
    let error = rejects_file(
        "[[systems.sber]]\n",
        ErrorKind::Syntax,
        &["must be a table, written `[systems.sber]`"],
    );
    assert_eq!(error.system_name(), Some("sber"));
    rejects_file(
        "[systems.\"SBER\"]\n",
        ErrorKind::SystemName,
        &["lower_snake_case"],
    );
    rejects_file(
        "[systems.\"\"]\n",
        ErrorKind::SystemName,
        &["lower_snake_case"],
    );
    rejects_file(
        "[systems.\"sbér\"]\n",
        ErrorKind::SystemName,
        &["lower_snake_case"],
    );
    rejects_file(
        "[systems.\"s b\"]\n",
        ErrorKind::SystemName,
        &["lower_snake_case"],
    );
    rejects_file(
        "[systems.sber]\nRead_Timeout = 3\n",
        ErrorKind::UnknownKey,
        &["unknown key `Read_Timeout`", "did you mean `read_timeout`?"],
    );
    rejects_file(
        "[systems.sber]\n\"\" = 3\n",
        ErrorKind::UnknownKey,
        &["unknown key ``", "allowed keys: `base_url`"],
    );
    rejects_file(
        "[systems.sber.retry]\nattempts = 3\n",
        ErrorKind::UnknownKey,
        &["unknown key `retry`"],
    );
}

#[test]
fn files_that_are_fine() {
    // Empty, a byte-order mark, comments and CRLF line ends are all accepted.
    assert_eq!(Settings::parse("", ORIGIN).unwrap().names().count(), 0);
    for text in [
        "\u{feff}[systems.sber]\n",
        "# services\r\n[systems.sber] # payments\r\nread_timeout = 30 # seconds\r\n",
    ] {
        let settings = Settings::parse(text, ORIGIN).unwrap();
        assert_eq!(settings.names().collect::<Vec<_>>(), ["sber"], "{text:?}");
    }
}

#[test]
fn malformed_environment_names_are_errors_naming_the_variable() {
    rejects_env(
        "CLIENT___CB_MIN_CALLS",
        "3",
        ErrorKind::Malformed,
        &["with both parts named"],
    );
    rejects_env(
        "CLIENT_SBÉR__CB_MIN_CALLS",
        "3",
        ErrorKind::UnknownSystem,
        &["did you mean `CLIENT_SBER__CB_MIN_CALLS`?"],
    );
    rejects_env(
        "CLIENT_SBER__CB__MIN_CALLS",
        "3",
        ErrorKind::UnknownKey,
        &["did you mean `CLIENT_SBER__CB_MIN_CALLS`?"],
    );
    rejects_env(
        "CLIENT_SBER_CB_MIN_CALLS",
        "3",
        ErrorKind::Malformed,
        &["a double underscore between system and key"],
    );
    // No key of ours: someone else's variable (`CLIENT_`, lower case, no key at all).
    for name in [
        "CLIENT_",
        "client_sber__cb_min_calls",
        "CLIENT_ID",
        "CLIENT_SBER_",
        "CLIENT_SBER__",
    ] {
        assert!(Settings::load_with_env("[systems.sber]", ORIGIN, [(name, "x")]).is_ok());
    }
}

#[test]
fn malformed_environment_values_are_errors_naming_the_variable() {
    let malformed = [
        (
            "CLIENT_SBER__CB_MIN_CALLS",
            "99999999999999999999",
            "a whole number",
        ),
        ("CLIENT_SBER__CB_MIN_CALLS", "0x10", "a whole number"),
        ("CLIENT_SBER__CB_MIN_CALLS", "5 calls", "a whole number"),
        ("CLIENT_SBER__READ_TIMEOUT", "1e400", "a number of seconds"),
        ("CLIENT_SBER__READ_TIMEOUT", "0x10", "a number of seconds"),
        (
            "CLIENT_SBER__READ_TIMEOUT",
            "30 parsecs",
            "a number of seconds",
        ),
        (
            "CLIENT_SBER__CB_FAILURE_RATE",
            "½",
            "a share between 0 and 1",
        ),
    ];
    for (name, value, says) in malformed {
        let error = rejects_env(name, value, ErrorKind::Malformed, &[says]);
        assert!(
            error.message().contains(&format!("got {value:?}")),
            "{error}"
        );
    }
    let out_of_range = [
        ("CLIENT_SBER__CB_MIN_CALLS", "-1", "from 1 to 10000"),
        ("CLIENT_SBER__READ_TIMEOUT", "1e-10", "greater than 0"),
        ("CLIENT_SBER__CB_FAILURE_RATE", "-0", "greater than 0"),
        ("CLIENT_SBER__BULKHEAD_WAIT", "-1", "at least 0"),
    ];
    for (name, value, says) in out_of_range {
        rejects_env(name, value, ErrorKind::OutOfRange, &[says]);
    }
    rejects_env(
        "CLIENT_SBER__BASE_URL",
        "ftp://x",
        ErrorKind::Malformed,
        &["an absolute http:// or https:// URL"],
    );
    // Whitespace around a value, and a leading plus, are read as the number.
    let settings = Settings::load_with_env(
        "[systems.sber]",
        ORIGIN,
        [
            ("CLIENT_SBER__CB_MIN_CALLS", " 5 "),
            ("CLIENT_SBER__CB_WINDOW_SIZE", "+20"),
        ],
    )
    .unwrap();
    let sber = settings.system("sber").unwrap();
    assert_eq!((sber.cb_min_calls(), sber.cb_window_size()), (5, 20));
}
