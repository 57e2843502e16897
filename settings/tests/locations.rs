//! Errors on a value written in the file name its line and column, however the table is
//! written (headers, inline tables, dotted keys, `[defaults]`); errors on an
//! environment variable's value, and settings not read from a file, have none.

use outbound_guard_settings::{ErrorKind, Location, Settings, SettingsError};

const ORIGIN: &str = "resilience.toml";

#[expect(
    clippy::unnecessary_wraps,
    reason = "compared with `SettingsError::location`, an option"
)]
fn at(line: u32, column: u32) -> Option<Location> {
    Some(Location { line, column })
}

fn error(text: &str) -> SettingsError {
    Settings::parse(text, ORIGIN).expect_err(text)
}

#[test]
fn a_bad_value_is_pointed_at_however_the_table_is_written() {
    for (text, location) in [
        ("[systems.sber]\ncb_failure_rate = 1.5\n", at(2, 19)),
        // Indented, after a comment line, with CRLF line ends.
        (
            "# payments\r\n[systems.sber]\r\n\r\n    cb_failure_rate = 1.5\r\n",
            at(4, 23),
        ),
        (
            "systems = { sber = { cb_failure_rate = 1.5 } }\n",
            at(1, 40),
        ),
        ("systems.sber.cb_failure_rate = 1.5\n", at(1, 32)),
        // Characters, not bytes: the comment's letters are two bytes each.
        (
            "[systems.sber]\nbase_url = \"http://x.test\" # сбер\ncb_failure_rate = 1.5\n",
            at(3, 19),
        ),
    ] {
        let err = error(text);
        assert_eq!(err.kind(), ErrorKind::OutOfRange, "{err}");
        assert_eq!(err.location(), location, "{text:?}: {err}");
        let Location { line, column } = location.unwrap();
        assert!(
            err.to_string().starts_with(&format!(
                "{ORIGIN}:{line}:{column}: [systems.sber] `cb_failure_rate`: got 1.5"
            )),
            "{err}"
        );
    }
}

#[test]
fn unknown_keys_names_and_shapes_point_at_the_key() {
    let err = error("[systems.sber]\nread_timeout = 3\n  cb_failur_rate = 0.3\n");
    assert_eq!(err.kind(), ErrorKind::UnknownKey);
    assert_eq!(err.location(), at(3, 3), "{err}");
    let err = error("[systems.Sber]\n");
    assert_eq!(err.kind(), ErrorKind::SystemName);
    assert_eq!(err.location(), at(1, 10), "{err}");
    let err = error("\n\nsystem = 1\n");
    assert_eq!(err.location(), at(3, 1), "{err}");
    let err = error("[defaults]\nbase_url = \"http://x.test\"\n");
    assert_eq!(err.location(), at(2, 1), "{err}");
}

#[test]
fn a_syntax_error_is_where_the_parser_says() {
    let err = error("[systems.sber]\nread_timeout = = 3\n");
    assert_eq!(err.kind(), ErrorKind::Syntax);
    let at = err.location().expect("a syntax error has a place");
    assert_eq!(at.line, 2, "{err}");
    assert!(
        err.message()
            .contains(&format!("line {}, column {}", at.line, at.column)),
        "the parser's own place agrees: {err}"
    );
}

#[test]
fn a_value_from_defaults_is_pointed_at_in_defaults() {
    let text =
        "[defaults]\nread_timeout = 40\n\n[systems.sber]\n[systems.customer]\nread_timeout = 10\n";
    let err = error(text);
    assert_eq!(err.system_name(), Some("sber"));
    assert_eq!(err.kind(), ErrorKind::Order);
    assert_eq!(err.location(), at(2, 16), "{err}");
}

#[test]
fn an_order_broken_by_a_default_points_at_the_key_that_is_written() {
    // `read_timeout` is not written: the guide's 30 s; `total_timeout` is.
    let err = error("[systems.sber]\ntotal_timeout = 20\n");
    assert_eq!(err.kind(), ErrorKind::Order);
    assert_eq!(err.location(), at(2, 17), "{err}");
}

#[test]
fn environment_values_have_no_place_in_the_file() {
    let err = Settings::load_with_env(
        "[systems.sber]\ncb_failure_rate = 0.3\n",
        ORIGIN,
        [("CLIENT_SBER__CB_FAILURE_RATE", "3")],
    )
    .unwrap_err();
    assert_eq!(err.location(), None);
    assert!(err
        .to_string()
        .starts_with("environment variable `CLIENT_SBER__CB_FAILURE_RATE`: "));
    // An override that breaks an order with a value of the file names the variable.
    let err = Settings::load_with_env(
        "[systems.sber]\nread_timeout = 10\n",
        ORIGIN,
        [("CLIENT_SBER__TOTAL_TIMEOUT", "5")],
    )
    .unwrap_err();
    assert_eq!(err.variable_name(), Some("CLIENT_SBER__TOTAL_TIMEOUT"));
    assert!(
        err.to_string()
            .starts_with("environment variable `CLIENT_SBER__TOTAL_TIMEOUT`: "),
        "{err}"
    );
}

#[test]
fn settings_not_read_from_a_file_have_no_place() {
    let err = outbound_guard_settings::SystemSettings::builder("sber")
        .cb_failure_rate(2.0)
        .build();
    assert_eq!(err.unwrap_err().location(), None);
}
