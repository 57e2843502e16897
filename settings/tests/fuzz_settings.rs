//! The settings parser and the environment-override parser never panic.
//!
//! Property-based fuzzing that runs in CI in a few seconds: arbitrary strings, TOML-ish
//! text built from the schema's own keys and every kind of TOML value, and arbitrary
//! environment pairs shaped like `CLIENT_<SYSTEM>__<KEY>`. Every input must give `Ok`
//! or a `SettingsError` whose `Display` is non-empty and says where the problem is; and
//! whatever is accepted must satisfy every validation rule. It is the settings' only
//! fuzzer: it runs on stable in every `cargo test`, with inputs shaped by the schema.

use outbound_guard_settings::{Settings, SettingsError, KEYS};
use proptest::prelude::*;

const ORIGIN: &str = "fuzz.toml";

/// The check every input gets.
fn check(text: &str, env: &[(String, String)]) -> Result<(), TestCaseError> {
    let result =
        std::panic::catch_unwind(|| Settings::load_with_env(text, ORIGIN, env.iter().cloned()));
    let Ok(result) = result else {
        return Err(TestCaseError::fail(format!(
            "panicked on {text:?} with {env:?}"
        )));
    };
    match result {
        Ok(settings) => accepted_is_valid(&settings),
        Err(error) => clear(&error),
    }
}

fn clear(error: &SettingsError) -> Result<(), TestCaseError> {
    let shown = error.to_string();
    prop_assert!(!error.message().is_empty(), "an empty message: {shown:?}");
    let located = match error.variable_name() {
        Some(variable) => shown.starts_with(&format!("environment variable `{variable}`: ")),
        None => match error.location() {
            Some(at) => {
                prop_assert!(at.line >= 1 && at.column >= 1, "{shown:?}");
                shown.starts_with(&format!("{ORIGIN}:{}:{}: ", at.line, at.column))
            }
            None => shown.starts_with(&format!("{ORIGIN}: ")),
        },
    };
    prop_assert!(located, "the error does not say where: {shown:?}");
    Ok(())
}

fn accepted_is_valid(settings: &Settings) -> Result<(), TestCaseError> {
    for s in settings.systems() {
        prop_assert!(
            s.connect_timeout() < s.read_timeout() && s.read_timeout() < s.total_timeout()
        );
        prop_assert!(!s.cb_slow_threshold().is_zero() && s.cb_slow_threshold() < s.total_timeout());
        prop_assert!(!s.cb_open_duration().is_zero());
        prop_assert!(1 <= s.cb_min_calls() && s.cb_min_calls() <= s.cb_window_size());
        prop_assert!(s.cb_failure_rate() > 0.0 && s.cb_failure_rate() <= 1.0);
        prop_assert!(s.cb_half_open_calls() >= 1 && s.max_connections() >= 1);
        prop_assert!(s.bulkhead_permits() >= 1);
        prop_assert!(s.name() != "default");
    }
    Ok(())
}

/// System names: good, forbidden, and malformed ones.
fn system_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["sber", "customer", "fns_receipt", "s1"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["default", "SBER", "", "a__b", "b_", "1x", "sbér", "\"q\""]).prop_map(str::to_owned),
        1 => "[a-z_0-9]{0,70}",
    ]
}

/// Keys: the schema's, near misses, and noise.
fn key() -> impl Strategy<Value = String> {
    let known: Vec<String> = KEYS.iter().map(|k| k.name().to_owned()).collect();
    prop_oneof![
        6 => prop::sample::select(known),
        1 => prop::sample::select(vec!["read_timout", "Read_Timeout", "cb_window", "\"\"", "timeout"]).prop_map(str::to_owned),
        1 => "[a-z_]{1,20}",
    ]
}

/// Every kind of TOML value, with numbers at the edges.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<i64>().prop_map(|i| i.to_string()),
        3 => (0i64..200).prop_map(|i| i.to_string()),
        3 => any::<f64>().prop_map(|f| format!("{f:?}")),
        3 => (0.0f64..100.0).prop_map(|f| format!("{f}")),
        2 => prop::sample::select(vec![
            "nan", "+inf", "-inf", "-0.0", "1e400", "1e-400", "0.0", "1_000", "0x10", "0o7", "0b1",
            "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", "true", "false", "[]", "[1, 2]",
            "{ secs = 30 }", "\"http://127.0.0.1:1\"", "\"https://\"", "\"\"", "'x'", "\"\"\"a\nb\"\"\"",
        ]).prop_map(str::to_owned),
        1 => "\"[ -~]{0,30}\"",
        1 => ".{0,12}",
    ]
}

/// One line of a TOML-ish file.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| format!("{k} = {v}")),
        2 => system_name().prop_map(|s| format!("[systems.{s}]")),
        1 => system_name().prop_map(|s| format!("[[systems.{s}]]")),
        1 => (system_name(), key(), value()).prop_map(|(s, k, v)| format!("systems.{s}.{k} = {v}")),
        1 => prop::sample::select(vec!["[systems]", "systems = 5", "[other]", "# comment", "", "[", "=", "\u{feff}"]).prop_map(str::to_owned),
        1 => ".{0,20}",
    ]
}

/// A TOML-ish file: usually starting with a system table.
fn toml_ish() -> impl Strategy<Value = String> {
    (
        system_name(),
        prop::collection::vec(line(), 0..14),
        any::<bool>(),
    )
        .prop_map(|(first, lines, header)| {
            let mut text = if header {
                format!("[systems.{first}]\n")
            } else {
                String::new()
            };
            for line in lines {
                text.push_str(&line);
                text.push('\n');
            }
            text
        })
}

/// Environment pairs: mostly `CLIENT_<SYSTEM>__<KEY>`, some near misses.
fn env_pair() -> impl Strategy<Value = (String, String)> {
    let name = prop_oneof![
        6 => (system_name(), key(), prop::sample::select(vec!["__", "_", "___", ""]))
            .prop_map(|(s, k, sep)| format!("CLIENT_{}{sep}{}", s.to_ascii_uppercase(), k.to_ascii_uppercase())),
        1 => "CLIENT_.{0,20}",
        1 => ".{0,20}",
    ];
    let value = prop_oneof![
        4 => value(),
        2 => prop::sample::select(vec!["", " ", " 5 ", "+5", "-1", "NaN", "inf", "1e400", "99999999999999999999", "0.5", "30", "0"]).prop_map(str::to_owned),
        1 => ".{0,16}",
    ];
    (name, value)
}

fn env() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(env_pair(), 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        check(&text, &[])?;
    }

    #[test]
    fn arbitrary_bytes_as_text_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        check(&String::from_utf8_lossy(&bytes), &[])?;
    }

    #[test]
    fn toml_ish_text_never_panics(text in toml_ish()) {
        check(&text, &[])?;
    }

    #[test]
    fn environment_overrides_never_panic(env in env()) {
        check("[systems.sber]\n[systems.customer]\ncb_failure_rate = 0.3\n", &env)?;
    }

    #[test]
    fn toml_ish_text_with_environment_overrides_never_panics(text in toml_ish(), env in env()) {
        check(&text, &env)?;
    }
}
