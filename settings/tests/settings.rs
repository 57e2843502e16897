//! Every settings rule and every environment error path: defaults, derived values, each
//! validation rule's error, unknown keys and systems, and the `CLIENT_<SYSTEM>__<KEY>`
//! overrides.

use std::time::Duration;

use outbound_guard_settings::{
    __private::suggest, env_var, ErrorKind, Key, Settings, SettingsError, SystemSettings, KEYS,
};

const ORIGIN: &str = "services/pay/resilience.toml";

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// `[systems.sber]` with `body`, parsed without the environment.
fn sber(body: &str) -> Result<SystemSettings, SettingsError> {
    Settings::parse(&format!("[systems.sber]\n{body}\n"), ORIGIN)
        .map(|s| s.system("sber").unwrap().clone())
}

fn sber_env(body: &str, env: &[(&str, &str)]) -> Result<SystemSettings, SettingsError> {
    Settings::load_with_env(
        &format!("[systems.sber]\n{body}\n"),
        ORIGIN,
        env.iter().copied(),
    )
    .map(|s| s.system("sber").unwrap().clone())
}

/// The error of `body`, checked to name the file, the system and `key`, to be of `kind`,
/// and to say `allowed` in its message.
#[track_caller]
fn rejects(body: &str, kind: ErrorKind, key: Option<&str>, allowed: &str) -> SettingsError {
    let err = sber(body).expect_err(body);
    assert_eq!(err.kind(), kind, "{body}: {err}");
    assert_eq!(err.system_name(), Some("sber"), "{err}");
    assert_eq!(err.key().map(Key::name), key, "{err}");
    assert_eq!(err.origin(), ORIGIN);
    assert_eq!(err.variable_name(), None);
    let text = err.to_string();
    // An error on a key written in the file points at its line (the body starts on
    // line 2, under `[systems.sber]`).
    let written_on = key.and_then(|key| {
        body.lines().position(|line| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    });
    if let Some(index) = written_on {
        let at = err
            .location()
            .unwrap_or_else(|| panic!("{text:?} should name the line"));
        assert_eq!(at.line as usize, index + 2, "{text:?}");
    }
    let place = match err.location() {
        Some(at) => format!("{ORIGIN}:{}:{}", at.line, at.column),
        None => ORIGIN.to_owned(),
    };
    let prefix = match key {
        Some(key) => format!("{place}: [systems.sber] `{key}`: "),
        None => format!("{place}: [systems.sber]: "),
    };
    assert!(
        text.starts_with(&prefix),
        "{text:?} should start with {prefix:?}"
    );
    assert!(text.contains(allowed), "{text:?} should say {allowed:?}");
    assert!(text.ends_with(err.message()));
    err
}

mod common;
use common::assert_names_variable;

/// The error of an environment override, checked to name `variable`.
#[track_caller]
fn env_rejects(
    body: &str,
    env: &[(&str, &str)],
    kind: ErrorKind,
    variable: &str,
    says: &str,
) -> SettingsError {
    let err = sber_env(body, env).expect_err("the override should be rejected");
    assert_eq!(err.kind(), kind, "{err}");
    assert_names_variable(&err, variable);
    let text = err.to_string();
    assert!(text.contains(says), "{text:?} should say {says:?}");
    err
}

#[test]
fn an_empty_table_has_the_guides_defaults() {
    let s = sber("").unwrap();
    assert_eq!(s.name(), "sber");
    assert_eq!(s.base_url(), None);
    assert_eq!(s.connect_timeout(), secs(2.0));
    assert_eq!(s.read_timeout(), secs(30.0));
    assert_eq!(s.total_timeout(), secs(35.0));
    assert_eq!(s.cb_window_size(), 50);
    assert_eq!(s.cb_min_calls(), 10);
    assert_eq!(s.cb_failure_rate(), 0.5);
    assert_eq!(s.cb_open_duration(), secs(30.0));
    assert_eq!(s.cb_half_open_calls(), 3);
    assert_eq!(s.cb_slow_threshold(), secs(15.0));
    assert_eq!(s.max_connections(), 10);
    assert_eq!(s.max_keepalive(), 12);
    assert_eq!(s.bulkhead_permits(), 8);
    assert_eq!(s.bulkhead_wait(), s.connect_timeout());
}

#[test]
fn every_key_can_be_set_in_the_file() {
    let s = sber(
        r#"
        base_url = "https://sber.example:8443/api"
        connect_timeout = 1.5
        read_timeout = 10
        total_timeout = 12.5
        cb_window_size = 20
        cb_min_calls = 20
        cb_failure_rate = 0.30
        cb_open_duration = 5
        cb_half_open_calls = 1
        cb_slow_threshold = 12.25
        max_connections = 3
        max_keepalive = 0
        bulkhead_wait = 0
        "#,
    )
    .unwrap();
    assert_eq!(s.base_url(), Some("https://sber.example:8443/api"));
    assert_eq!(s.connect_timeout(), secs(1.5));
    assert_eq!(s.read_timeout(), secs(10.0));
    assert_eq!(s.total_timeout(), secs(12.5));
    assert_eq!(s.cb_window_size(), 20);
    assert_eq!(s.cb_min_calls(), 20);
    assert_eq!(s.cb_failure_rate(), 0.30);
    assert_eq!(s.cb_open_duration(), secs(5.0));
    assert_eq!(s.cb_half_open_calls(), 1);
    assert_eq!(s.cb_slow_threshold(), secs(12.25));
    assert_eq!(s.max_connections(), 3);
    assert_eq!(s.max_keepalive(), 0);
    assert_eq!(s.bulkhead_wait(), Duration::ZERO);
}

#[test]
fn files_with_no_systems_and_many_systems() {
    assert_eq!(Settings::parse("", ORIGIN).unwrap().names().len(), 0);
    assert_eq!(
        Settings::parse("[systems]", ORIGIN).unwrap().names().len(),
        0
    );
    let settings = Settings::parse(
        "[systems.sber]\ncb_failure_rate = 0.3\n[systems.customer]\n[systems.receipt_2]\nread_timeout = 4\n",
        ORIGIN,
    )
    .unwrap();
    assert_eq!(settings.origin(), ORIGIN);
    assert_eq!(
        settings.names().collect::<Vec<_>>(),
        ["customer", "receipt_2", "sber"]
    );
    assert_eq!(
        settings
            .systems()
            .map(SystemSettings::name)
            .collect::<Vec<_>>(),
        ["customer", "receipt_2", "sber"]
    );
    assert_eq!(settings.system("sber").unwrap().cb_failure_rate(), 0.3);
    assert_eq!(settings.system("customer").unwrap().cb_failure_rate(), 0.5);
    assert_eq!(
        settings.system("receipt_2").unwrap().cb_slow_threshold(),
        secs(2.0)
    );
    assert!(settings.system("nope").is_none());
}

#[test]
fn slow_threshold_defaults_to_read_over_2() {
    for (read, total, slow) in [
        (30.0, 35.0, 15.0),
        (10.0, 12.0, 5.0),
        (7.0, 8.0, 3.5),
        (3.0, 100.0, 1.5),
    ] {
        let s = sber(&format!("read_timeout = {read}\ntotal_timeout = {total}")).unwrap();
        assert_eq!(s.cb_slow_threshold(), secs(slow), "read {read}");
    }
    // Stated explicitly, it wins.
    assert_eq!(
        sber("cb_slow_threshold = 20").unwrap().cb_slow_threshold(),
        secs(20.0)
    );
}

#[test]
fn keepalive_is_max_connections_times_1_2_rounded_up_and_bulkhead_80_percent() {
    // (max_connections, keepalive, bulkhead permits)
    for (max, keepalive, permits) in [
        (1, 2, 1),
        (2, 3, 1),
        (3, 4, 2),
        (4, 5, 3),
        (5, 6, 4),
        (7, 9, 5),
        (10, 12, 8),
        (11, 14, 8),
        (100, 120, 80),
        (100_000, 120_000, 80_000),
    ] {
        let s = sber(&format!("max_connections = {max}")).unwrap();
        assert_eq!(s.max_keepalive(), keepalive, "keepalive for {max}");
        assert_eq!(s.bulkhead_permits(), permits, "permits for {max}");
    }
    let s = sber("max_connections = 5\nmax_keepalive = 2").unwrap();
    assert_eq!((s.max_keepalive(), s.bulkhead_permits()), (2, 4));
}

#[test]
fn bulkhead_wait_defaults_to_connect_timeout() {
    assert_eq!(
        sber("connect_timeout = 0.5").unwrap().bulkhead_wait(),
        secs(0.5)
    );
    assert_eq!(
        sber("connect_timeout = 0.5\nbulkhead_wait = 3")
            .unwrap()
            .bulkhead_wait(),
        secs(3.0)
    );
    assert_eq!(
        sber("bulkhead_wait = 0").unwrap().bulkhead_wait(),
        Duration::ZERO
    );
}

#[test]
fn timeouts_are_ordered_connect_read_total() {
    let ordering = "connect_timeout < read_timeout < total_timeout";
    let err = rejects(
        "connect_timeout = 30",
        ErrorKind::Order,
        Some("connect_timeout"),
        ordering,
    );
    assert!(err.message().contains("`read_timeout` = 30"), "{err}");
    rejects(
        "connect_timeout = 31",
        ErrorKind::Order,
        Some("connect_timeout"),
        ordering,
    );
    rejects(
        "read_timeout = 35",
        ErrorKind::Order,
        Some("read_timeout"),
        ordering,
    );
    rejects(
        "total_timeout = 29.9",
        ErrorKind::Order,
        Some("read_timeout"),
        ordering,
    );
    rejects(
        "connect_timeout = 5\nread_timeout = 4\ntotal_timeout = 3",
        ErrorKind::Order,
        Some("connect_timeout"),
        ordering,
    );
    // Just inside is fine.
    sber("connect_timeout = 29.9").unwrap();
    sber("read_timeout = 34.9").unwrap();
}

#[test]
fn slow_threshold_is_between_0_and_total() {
    let err = rejects(
        "cb_slow_threshold = 35",
        ErrorKind::Order,
        Some("cb_slow_threshold"),
        "0 < cb_slow_threshold < total_timeout",
    );
    assert!(err.message().contains("`total_timeout` = 35"), "{err}");
    rejects(
        "cb_slow_threshold = 50",
        ErrorKind::Order,
        Some("cb_slow_threshold"),
        "total_timeout",
    );
    rejects(
        "cb_slow_threshold = 0",
        ErrorKind::OutOfRange,
        Some("cb_slow_threshold"),
        "greater than 0",
    );
    rejects(
        "cb_slow_threshold = -1",
        ErrorKind::OutOfRange,
        Some("cb_slow_threshold"),
        "greater than 0",
    );
    // Longer than read is allowed as long as it is under total.
    assert_eq!(
        sber("cb_slow_threshold = 34").unwrap().cb_slow_threshold(),
        secs(34.0)
    );
}

#[test]
fn failure_rate_is_in_0_exclusive_to_1() {
    let allowed = "greater than 0 and at most 1";
    for bad in ["0", "0.0", "-0.1", "1.0001", "2", "nan", "inf", "-inf"] {
        let err = rejects(
            &format!("cb_failure_rate = {bad}"),
            ErrorKind::OutOfRange,
            Some("cb_failure_rate"),
            allowed,
        );
        assert!(err.message().starts_with("got "), "{err}");
    }
    assert_eq!(sber("cb_failure_rate = 1").unwrap().cb_failure_rate(), 1.0);
    assert_eq!(
        sber("cb_failure_rate = 0.01").unwrap().cb_failure_rate(),
        0.01
    );
}

#[test]
fn min_calls_between_1_and_the_window() {
    rejects(
        "cb_min_calls = 0",
        ErrorKind::OutOfRange,
        Some("cb_min_calls"),
        "from 1 to",
    );
    rejects(
        "cb_min_calls = -3",
        ErrorKind::OutOfRange,
        Some("cb_min_calls"),
        "from 1 to",
    );
    let err = rejects(
        "cb_min_calls = 51",
        ErrorKind::Order,
        Some("cb_min_calls"),
        "1 ≤ cb_min_calls ≤ cb_window_size",
    );
    assert!(err.message().contains("`cb_window_size` = 50"), "{err}");
    rejects(
        "cb_window_size = 9",
        ErrorKind::Order,
        Some("cb_min_calls"),
        "cb_window_size",
    );
    rejects(
        "cb_window_size = 0",
        ErrorKind::OutOfRange,
        Some("cb_window_size"),
        "from 1 to",
    );
    let s = sber("cb_min_calls = 50").unwrap();
    assert_eq!((s.cb_min_calls(), s.cb_window_size()), (50, 50));
    let s = sber("cb_window_size = 1\ncb_min_calls = 1").unwrap();
    assert_eq!((s.cb_min_calls(), s.cb_window_size()), (1, 1));
}

#[test]
fn at_least_one_half_open_trial() {
    rejects(
        "cb_half_open_calls = 0",
        ErrorKind::OutOfRange,
        Some("cb_half_open_calls"),
        "from 1 to",
    );
    rejects(
        "cb_half_open_calls = -1",
        ErrorKind::OutOfRange,
        Some("cb_half_open_calls"),
        "from 1 to",
    );
    assert_eq!(
        sber("cb_half_open_calls = 1").unwrap().cb_half_open_calls(),
        1
    );
}

#[test]
fn counts_have_bounds() {
    rejects(
        "max_connections = 0",
        ErrorKind::OutOfRange,
        Some("max_connections"),
        "from 1 to",
    );
    rejects(
        "max_keepalive = -1",
        ErrorKind::OutOfRange,
        Some("max_keepalive"),
        "from 0 to",
    );
    rejects(
        "cb_window_size = 10000000000",
        ErrorKind::OutOfRange,
        Some("cb_window_size"),
        "from 1 to",
    );
    rejects(
        "max_connections = 100001",
        ErrorKind::OutOfRange,
        Some("max_connections"),
        "100000",
    );
    rejects(
        "cb_half_open_calls = 1001",
        ErrorKind::OutOfRange,
        Some("cb_half_open_calls"),
        "1000",
    );
}

#[test]
fn no_zero_negative_nan_or_infinite_durations() {
    for key in [
        "connect_timeout",
        "read_timeout",
        "total_timeout",
        "cb_open_duration",
        "cb_slow_threshold",
    ] {
        for bad in [
            "0",
            "0.0",
            "-1",
            "-0.5",
            "nan",
            "inf",
            "-inf",
            "\"86401s\"",
            "1e300",
        ] {
            rejects(
                &format!("{key} = {bad}"),
                ErrorKind::OutOfRange,
                Some(key),
                "greater than 0",
            );
        }
    }
    // bulkhead_wait may be zero (do not wait at all), nothing else.
    for bad in ["-1", "nan", "inf", "-inf"] {
        rejects(
            &format!("bulkhead_wait = {bad}"),
            ErrorKind::OutOfRange,
            Some("bulkhead_wait"),
            "at least 0",
        );
    }
}

#[test]
fn a_duration_too_small_to_be_represented_is_zero_and_rejected() {
    // 1e-12 s is below a nanosecond: as a `Duration` it would be zero, which an open
    // duration of 0 or a zero timeout would mean.
    for key in ["cb_open_duration", "connect_timeout", "cb_slow_threshold"] {
        rejects(
            &format!("{key} = 1e-12"),
            ErrorKind::OutOfRange,
            Some(key),
            "greater than 0",
        );
    }
    assert_eq!(
        sber("cb_open_duration = 1e-9").unwrap().cb_open_duration(),
        Duration::from_nanos(1)
    );
}

#[test]
fn values_of_the_wrong_type_are_malformed() {
    rejects(
        "read_timeout = \"30\"",
        ErrorKind::Malformed,
        Some("read_timeout"),
        "a number of seconds",
    );
    rejects(
        "read_timeout = true",
        ErrorKind::Malformed,
        Some("read_timeout"),
        "a number of seconds",
    );
    rejects(
        "cb_window_size = 50.0",
        ErrorKind::Malformed,
        Some("cb_window_size"),
        "a whole number",
    );
    rejects(
        "cb_window_size = \"50\"",
        ErrorKind::Malformed,
        Some("cb_window_size"),
        "a whole number",
    );
    rejects(
        "cb_failure_rate = \"50%\"",
        ErrorKind::Malformed,
        Some("cb_failure_rate"),
        "a share between 0 and 1",
    );
    rejects(
        "base_url = 8080",
        ErrorKind::Malformed,
        Some("base_url"),
        "a URL string",
    );
    rejects(
        "cb_open_duration = [30]",
        ErrorKind::Malformed,
        Some("cb_open_duration"),
        "seconds",
    );
    rejects(
        "cb_open_duration = { secs = 30 }",
        ErrorKind::Malformed,
        Some("cb_open_duration"),
        "seconds",
    );
    // Integers are fine for seconds and rates.
    assert_eq!(
        sber("cb_open_duration = 7").unwrap().cb_open_duration(),
        secs(7.0)
    );
    assert_eq!(sber("cb_failure_rate = 1").unwrap().cb_failure_rate(), 1.0);
}

#[test]
fn base_url_must_be_absolute_http() {
    for bad in [
        "ftp://host",
        "localhost:8080",
        "http://",
        "https://",
        "http://a b",
        "",
    ] {
        rejects(
            &format!("base_url = {bad:?}"),
            ErrorKind::Malformed,
            Some("base_url"),
            "absolute http:// or https:// URL",
        );
    }
    for good in ["http://127.0.0.1:8081", "https://sber.example/api"] {
        assert_eq!(
            sber(&format!("base_url = {good:?}")).unwrap().base_url(),
            Some(good)
        );
    }
}

#[test]
fn unknown_keys_are_rejected_with_a_did_you_mean() {
    let err = rejects(
        "cb_failure_rat = 0.5",
        ErrorKind::UnknownKey,
        None,
        "unknown key `cb_failure_rat`",
    );
    assert!(
        err.message().contains("did you mean `cb_failure_rate`?"),
        "{err}"
    );
    for key in KEYS {
        assert!(
            err.message().contains(&format!("`{key}`")),
            "allowed keys should list {key}: {err}"
        );
    }
    let err = rejects(
        "read_timout = 3",
        ErrorKind::UnknownKey,
        None,
        "did you mean `read_timeout`?",
    );
    assert!(err.message().contains("allowed keys"));
    // Nothing close: no suggestion, still the list.
    let err = rejects(
        "colour = \"blue\"",
        ErrorKind::UnknownKey,
        None,
        "allowed keys: `base_url`",
    );
    assert!(!err.message().contains("did you mean"), "{err}");
    // The guide's resilience4j-style names are not ours.
    rejects(
        "failure_rate_threshold = 50",
        ErrorKind::UnknownKey,
        None,
        "unknown key",
    );
}

#[test]
fn the_file_must_be_shaped_as_system_tables() {
    let syntax = |text: &str, says: &str| {
        let err = Settings::parse(text, ORIGIN).expect_err(text);
        assert_eq!(err.kind(), ErrorKind::Syntax, "{err}");
        assert_eq!(err.origin(), ORIGIN);
        let shown = err.to_string();
        let place = match err.location() {
            Some(at) => format!("{ORIGIN}:{}:{}: ", at.line, at.column),
            None => format!("{ORIGIN}: "),
        };
        assert!(shown.starts_with(&place), "{shown}");
        assert!(shown.contains(says), "{shown:?} should say {says:?}");
        err
    };
    syntax("[systems.sber\n", "not valid TOML");
    syntax(
        "systems.sber.read_timeout() = 1\nsystems.sber.read_timeout() = 2",
        "not valid TOML",
    );
    syntax("[system.sber]", "unknown top-level key `system`");
    syntax("read_timeout = 3", "unknown top-level key `read_timeout`");
    syntax("systems = 5", "`systems` must be a table of tables");
    let err = syntax("[systems]\nsber = 5", "`systems.sber` must be a table");
    assert_eq!(err.system_name(), Some("sber"));
}

#[test]
fn a_system_named_default_is_rejected() {
    let err = Settings::parse("[systems.sber]\n[systems.default]\n", ORIGIN).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SystemName);
    assert_eq!(err.system_name(), Some("default"));
    assert_eq!(err.key().map(Key::name), None);
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{ORIGIN}:2:10: [systems.default]: ")),
        "{text}"
    );
    assert!(text.contains("R-RES-CB-X3"), "{text}");
    assert!(text.contains("its own breaker"), "{text}");
}

#[test]
fn system_names_are_lower_snake_case() {
    let long = format!("s{}", "x".repeat(64));
    for bad in [
        "Sber",
        "SBER",
        "sber-online",
        "1sber",
        "_sber",
        "sber_",
        "sb__er",
        "sber.x",
        "сбер",
        "",
        &long,
    ] {
        let text = format!("[systems.{}]\n", toml_key(bad));
        let err = Settings::parse(&text, ORIGIN).expect_err(bad);
        assert_eq!(err.kind(), ErrorKind::SystemName, "{bad}: {err}");
        assert_eq!(err.system_name(), Some(bad));
        assert!(err.to_string().contains("lower_snake_case"), "{err}");
    }
    let max = "s".repeat(64);
    for good in ["sber", "sber_online", "receipt2", "a_1_b", max.as_str()] {
        Settings::parse(&format!("[systems.{good}]"), ORIGIN).unwrap();
    }
}

fn toml_key(name: &str) -> String {
    format!("{name:?}")
}

#[test]
fn env_var_names() {
    assert_eq!(
        env_var("sber", Key::CbFailureRate),
        "CLIENT_SBER__CB_FAILURE_RATE"
    );
    assert_eq!(
        env_var("sber_online", Key::ReadTimeout),
        "CLIENT_SBER_ONLINE__READ_TIMEOUT"
    );
    let s = sber("").unwrap();
    assert_eq!(s.env_var(Key::MaxKeepalive), "CLIENT_SBER__MAX_KEEPALIVE");
    for key in KEYS {
        assert_eq!(Key::from_name(key.name()), Some(key));
        assert_eq!(key.to_string(), key.name());
    }
    assert_eq!(Key::from_name("CB_FAILURE_RATE"), None);
    assert_eq!(suggest("sbr", ["sber", "customer"]), Some("sber"));
    assert_eq!(suggest("zzz", ["sber", "customer"]), None);
}

#[test]
fn env_overrides_each_kind_of_value() {
    let s = sber_env(
        "cb_failure_rate = 0.5\nread_timeout = 20",
        &[
            ("CLIENT_SBER__BASE_URL", "http://10.0.0.1:9000"),
            ("CLIENT_SBER__READ_TIMEOUT", "8.5"),
            ("CLIENT_SBER__TOTAL_TIMEOUT", "9"),
            ("CLIENT_SBER__CB_WINDOW_SIZE", "100"),
            ("CLIENT_SBER__CB_FAILURE_RATE", " 0.30 "),
            ("CLIENT_SBER__CB_OPEN_DURATION", "5"),
            ("CLIENT_SBER__BULKHEAD_WAIT", "0"),
            ("CLIENT_SBER__MAX_CONNECTIONS", "5"),
        ],
    )
    .unwrap();
    assert_eq!(s.base_url(), Some("http://10.0.0.1:9000"));
    assert_eq!(s.read_timeout(), secs(8.5));
    assert_eq!(s.total_timeout(), secs(9.0));
    assert_eq!(s.cb_window_size(), 100);
    assert_eq!(s.cb_failure_rate(), 0.30);
    assert_eq!(s.cb_open_duration(), secs(5.0));
    assert_eq!(s.bulkhead_wait(), Duration::ZERO);
    // Derived values follow the overridden ones.
    assert_eq!(s.cb_slow_threshold(), secs(4.25));
    assert_eq!((s.max_keepalive(), s.bulkhead_permits()), (6, 4));
}

#[test]
fn every_key_has_a_working_override() {
    let values = [
        (Key::BaseUrl, "https://x.example"),
        (Key::ConnectTimeout, "1"),
        (Key::ReadTimeout, "20"),
        (Key::TotalTimeout, "40"),
        (Key::CbWindowSize, "40"),
        (Key::CbMinCalls, "7"),
        (Key::CbFailureRate, "0.25"),
        (Key::CbOpenDuration, "11"),
        (Key::CbOpenMax, "120"),
        (Key::CbOpenBackoff, "2"),
        (Key::CbOpenJitter, "0.1"),
        (Key::CbHalfOpenCalls, "2"),
        (Key::CbSlowThreshold, "3"),
        (Key::MaxConnections, "20"),
        (Key::MaxKeepalive, "4"),
        (Key::BulkheadWait, "0.25"),
        (Key::Bulkhead, "adaptive"),
        (Key::BulkheadFloor, "3"),
        (Key::CbMode, "forced_open"),
    ];
    assert_eq!(values.len(), KEYS.len());
    for (key, value) in values {
        let var = env_var("sber", key);
        let base = sber("").unwrap();
        let s = sber_env("", &[(&var, value)]).unwrap();
        assert_ne!(s, base, "{var} changed nothing");
    }
    let vars: Vec<(String, &str)> = values
        .iter()
        .map(|(k, v)| (env_var("sber", *k), *v))
        .collect();
    let s = Settings::load_with_env("[systems.sber]", ORIGIN, vars).unwrap();
    let s = s.system("sber").unwrap();
    assert_eq!(s.base_url(), Some("https://x.example"));
    assert_eq!(s.connect_timeout(), secs(1.0));
    assert_eq!(s.read_timeout(), secs(20.0));
    assert_eq!(s.total_timeout(), secs(40.0));
    assert_eq!(s.cb_window_size(), 40);
    assert_eq!(s.cb_min_calls(), 7);
    assert_eq!(s.cb_failure_rate(), 0.25);
    assert_eq!(s.cb_open_duration(), secs(11.0));
    assert_eq!(s.cb_open_max(), secs(120.0));
    assert_eq!(s.cb_open_backoff(), 2.0);
    assert_eq!(s.cb_open_jitter(), 0.1);
    assert_eq!(s.cb_half_open_calls(), 2);
    assert_eq!(s.cb_slow_threshold(), secs(3.0));
    assert_eq!(s.max_connections(), 20);
    assert_eq!(s.max_keepalive(), 4);
    assert_eq!(s.cb_mode(), outbound_guard_settings::CbMode::ForcedOpen);
    assert_eq!(s.bulkhead_wait(), secs(0.25));
    assert_eq!((s.bulkhead(), s.bulkhead_floor()), ("adaptive", 3));
}

#[test]
fn env_overrides_only_their_own_system() {
    let settings = Settings::load_with_env(
        "[systems.sber]\n[systems.sber_online]\n",
        ORIGIN,
        [
            ("CLIENT_SBER_ONLINE__CB_FAILURE_RATE", "0.3"),
            ("CLIENT_SBER__CB_HALF_OPEN_CALLS", "5"),
        ],
    )
    .unwrap();
    let sber = settings.system("sber").unwrap();
    let online = settings.system("sber_online").unwrap();
    assert_eq!(
        (sber.cb_failure_rate(), sber.cb_half_open_calls()),
        (0.5, 5)
    );
    assert_eq!(
        (online.cb_failure_rate(), online.cb_half_open_calls()),
        (0.3, 3)
    );
}

#[test]
fn observe_mode_is_set_in_the_file_or_the_environment() {
    use outbound_guard_settings::CbMode;
    let file = Settings::parse("[systems.sber]\ncb_mode = \"observe\"\n", ORIGIN).unwrap();
    assert_eq!(file.system("sber").unwrap().cb_mode(), CbMode::Observe);
    let env = Settings::load_with_env(
        "[systems.sber]\ncb_mode = \"auto\"\n",
        ORIGIN,
        [("CLIENT_SBER__CB_MODE", "observe")],
    )
    .unwrap();
    assert_eq!(env.system("sber").unwrap().cb_mode(), CbMode::Observe);
    let err = Settings::parse("[systems.sber]\ncb_mode = \"observing\"\n", ORIGIN).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("cb_mode"), "{text}");
    assert!(text.contains("\"observe\""), "{text}");
}

#[test]
fn the_bulkhead_is_fixed_by_default_and_adaptive_in_the_file_or_the_environment() {
    let default = sber("").unwrap();
    assert_eq!(
        (default.bulkhead(), default.bulkhead_adaptive()),
        ("fixed", false)
    );
    assert_eq!(default.bulkhead_floor(), 1);
    let file = sber("bulkhead = \"adaptive\"\nbulkhead_floor = 3").unwrap();
    assert_eq!(
        (file.bulkhead(), file.bulkhead_adaptive()),
        ("adaptive", true)
    );
    assert_eq!(file.bulkhead_floor(), 3);
    let env = sber_env(
        "bulkhead = \"fixed\"",
        &[
            ("CLIENT_SBER__BULKHEAD", "adaptive"),
            ("CLIENT_SBER__BULKHEAD_FLOOR", "2"),
        ],
    )
    .unwrap();
    assert!(env.bulkhead_adaptive());
    assert_eq!(env.bulkhead_floor(), 2);
    rejects(
        "bulkhead = \"vegas\"",
        ErrorKind::Malformed,
        Some("bulkhead"),
        "one of \"fixed\", \"adaptive\"",
    );
    rejects(
        "bulkhead_floor = 0",
        ErrorKind::OutOfRange,
        Some("bulkhead_floor"),
        "from 1 to",
    );
}

#[test]
fn a_bulkhead_floor_above_the_bulkheads_permits_is_refused() {
    // max_connections 10: 8 permits.
    assert_eq!(sber("bulkhead_floor = 8").unwrap().bulkhead_floor(), 8);
    let err = rejects(
        "bulkhead_floor = 9",
        ErrorKind::Order,
        Some("bulkhead_floor"),
        "cannot be above its ceiling",
    );
    assert!(err.message().contains("8 permits"), "{err}");
    // Lowering the ceiling under a floor written in the file, from the environment.
    let err = sber_env(
        "bulkhead_floor = 4",
        &[("CLIENT_SBER__MAX_CONNECTIONS", "4")],
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Order, "{err}");
    assert_eq!(
        err.variable_name(),
        Some("CLIENT_SBER__MAX_CONNECTIONS"),
        "{err}"
    );
}

#[test]
fn variables_of_others_are_ignored() {
    let s = sber_env(
        "",
        &[
            ("CLIENT_ID", "abc"),
            ("CLIENT", "x"),
            ("PATH", "/bin"),
            ("XCLIENT_SBER__READ_TIMEOUT", "nope"),
        ],
    )
    .unwrap();
    assert_eq!(s, sber("").unwrap());
}

#[test]
fn env_unknown_system_is_an_error() {
    let err = env_rejects(
        "",
        &[("CLIENT_SBR__CB_FAILURE_RATE", "0.5")],
        ErrorKind::UnknownSystem,
        "CLIENT_SBR__CB_FAILURE_RATE",
        "no system `sbr`",
    );
    assert!(
        err.message()
            .contains("did you mean `CLIENT_SBER__CB_FAILURE_RATE`?"),
        "{err}"
    );
    assert_eq!(err.system_name(), Some("sbr"));
    assert!(err.message().contains("known systems: `sber`"), "{err}");
    assert!(err.message().contains(ORIGIN), "{err}");
    let err = env_rejects(
        "",
        &[("CLIENT_PAYPAL__READ_TIMEOUT", "1")],
        ErrorKind::UnknownSystem,
        "CLIENT_PAYPAL__READ_TIMEOUT",
        "no system `paypal`",
    );
    assert!(!err.message().contains("did you mean"), "{err}");
    // A file with no systems: every override names an unknown system.
    let err =
        Settings::load_with_env("", ORIGIN, [("CLIENT_SBER__READ_TIMEOUT", "1")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownSystem);
    assert!(err.message().contains("known systems: none"), "{err}");
}

#[test]
fn env_unknown_key_is_an_error() {
    let err = env_rejects(
        "",
        &[("CLIENT_SBER__CB_FAILURE_RAT", "0.5")],
        ErrorKind::UnknownKey,
        "CLIENT_SBER__CB_FAILURE_RAT",
        "no key `cb_failure_rat`",
    );
    // The suggestion is spelled as the variable would be, in one case.
    assert!(
        err.message()
            .contains("did you mean `CLIENT_SBER__CB_FAILURE_RATE`?"),
        "{err}"
    );
    assert_eq!(err.system_name(), Some("sber"));
    // Three underscores: the key starts with one.
    env_rejects(
        "",
        &[("CLIENT_SBER___READ_TIMEOUT", "1")],
        ErrorKind::UnknownKey,
        "CLIENT_SBER___READ_TIMEOUT",
        "no key `_read_timeout`",
    );
}

#[test]
fn env_malformed_values_are_errors() {
    let cases = [
        (
            "CLIENT_SBER__CB_FAILURE_RATE",
            "abc",
            "a share between 0 and 1",
        ),
        (
            "CLIENT_SBER__CB_FAILURE_RATE",
            "50%",
            "a share between 0 and 1",
        ),
        (
            "CLIENT_SBER__CB_FAILURE_RATE",
            "",
            "a share between 0 and 1",
        ),
        (
            "CLIENT_SBER__READ_TIMEOUT",
            "30 parsecs",
            "a number of seconds",
        ),
        ("CLIENT_SBER__READ_TIMEOUT", "-5s", "a number of seconds"),
        ("CLIENT_SBER__READ_TIMEOUT", "1,5", "a number of seconds"),
        ("CLIENT_SBER__CB_WINDOW_SIZE", "50.0", "a whole number"),
        ("CLIENT_SBER__CB_WINDOW_SIZE", "ten", "a whole number"),
        ("CLIENT_SBER__MAX_CONNECTIONS", "1e2", "a whole number"),
    ];
    for (var, value, says) in cases {
        let err = env_rejects("", &[(var, value)], ErrorKind::Malformed, var, says);
        assert!(err.message().contains(&format!("got {value:?}")), "{err}");
    }
}

#[test]
fn env_nan_and_infinity_are_rejected() {
    for value in ["NaN", "nan", "inf", "-inf", "infinity", "+Infinity"] {
        for key in [
            Key::CbFailureRate,
            Key::ReadTimeout,
            Key::CbOpenDuration,
            Key::BulkheadWait,
        ] {
            let var = env_var("sber", key);
            env_rejects("", &[(&var, value)], ErrorKind::Malformed, &var, "expected");
        }
    }
}

#[test]
fn env_out_of_range_values_name_the_variable() {
    let cases = [
        (
            "CLIENT_SBER__CB_FAILURE_RATE",
            "1.5",
            "cb_failure_rate",
            ErrorKind::OutOfRange,
        ),
        (
            "CLIENT_SBER__CB_FAILURE_RATE",
            "0",
            "cb_failure_rate",
            ErrorKind::OutOfRange,
        ),
        (
            "CLIENT_SBER__CB_MIN_CALLS",
            "0",
            "cb_min_calls",
            ErrorKind::OutOfRange,
        ),
        (
            "CLIENT_SBER__CB_HALF_OPEN_CALLS",
            "-1",
            "cb_half_open_calls",
            ErrorKind::OutOfRange,
        ),
        (
            "CLIENT_SBER__CB_OPEN_DURATION",
            "0",
            "cb_open_duration",
            ErrorKind::OutOfRange,
        ),
        (
            "CLIENT_SBER__CONNECT_TIMEOUT",
            "-2",
            "connect_timeout",
            ErrorKind::OutOfRange,
        ),
        (
            "CLIENT_SBER__BASE_URL",
            "ftp://x",
            "base_url",
            ErrorKind::Malformed,
        ),
    ];
    for (var, value, key, kind) in cases {
        let err = env_rejects("", &[(var, value)], kind, var, key);
        assert_eq!(err.key().map(Key::name), Some(key));
        assert_eq!(err.system_name(), Some("sber"));
        assert!(
            err.to_string()
                .contains(&format!("[systems.sber] `{key}`: ")),
            "{err}"
        );
    }
}

#[test]
fn a_single_underscore_typo_is_an_error_an_unrelated_variable_is_not() {
    let err = env_rejects(
        "",
        &[("CLIENT_SBER_CB_FAILURE_RATE", "0.5")],
        ErrorKind::Malformed,
        "CLIENT_SBER_CB_FAILURE_RATE",
        "double underscore",
    );
    assert!(
        err.message().contains("CLIENT_SBER__CB_FAILURE_RATE"),
        "{err}"
    );
    // Lower case, and a system with an underscore in its name.
    let settings = Settings::load_with_env(
        "[systems.sber_online]",
        ORIGIN,
        [("CLIENT_SBER_ONLINE_READ_TIMEOUT", "1")],
    );
    assert_eq!(
        settings.unwrap_err().variable_name(),
        Some("CLIENT_SBER_ONLINE_READ_TIMEOUT")
    );
    // A known system with no key of ours is the application's (`CLIENT_SBER`,
    // `CLIENT_SBER_TOKEN`), as is `CLIENT_ID`.
    sber_env(
        "",
        &[
            ("CLIENT_SBER", "0.5"),
            ("CLIENT_SBER_TOKEN", "t"),
            ("CLIENT_ID", "42"),
            ("CLIENT_SECRET_KEY", "x"),
        ],
    )
    .unwrap();
}

#[test]
fn an_override_that_breaks_an_ordering_rule_names_the_variable() {
    // Each override is fine alone, but breaks a rule against a value from the file or a
    // default: the error must name the variable, whichever key it is reported on.
    let cases: [(&str, &str, &str); 7] = [
        ("", "CLIENT_SBER__READ_TIMEOUT", "1"),
        ("", "CLIENT_SBER__CONNECT_TIMEOUT", "30"),
        ("", "CLIENT_SBER__TOTAL_TIMEOUT", "20"),
        ("", "CLIENT_SBER__CB_WINDOW_SIZE", "5"),
        ("", "CLIENT_SBER__CB_MIN_CALLS", "60"),
        ("", "CLIENT_SBER__CB_SLOW_THRESHOLD", "40"),
        (
            "read_timeout = 10\ntotal_timeout = 20\ncb_slow_threshold = 15",
            "CLIENT_SBER__TOTAL_TIMEOUT",
            "14",
        ),
    ];
    for (body, var, value) in cases {
        let err = sber_env(body, &[(var, value)]).expect_err(var);
        assert_eq!(err.kind(), ErrorKind::Order, "{var}: {err}");
        assert_names_variable(&err, var);
        assert_eq!(err.system_name(), Some("sber"));
    }
}

#[test]
fn the_first_error_does_not_depend_on_the_environments_order() {
    let vars = [
        ("CLIENT_SBER__CB_FAILURE_RAT", "1"),
        ("CLIENT_SBER__READ_TIMEOUTT", "1"),
        ("CLIENT_ZZZ__READ_TIMEOUT", "x"),
    ];
    let forward = sber_env("", &vars).unwrap_err();
    let mut reversed = vars;
    reversed.reverse();
    let backward = sber_env("", &reversed).unwrap_err();
    assert_eq!(forward, backward);
    assert_eq!(forward.variable_name(), Some("CLIENT_SBER__CB_FAILURE_RAT"));
}

/// The only test that touches the process environment (the others pass theirs in).
#[test]
fn load_reads_the_process_environment() {
    let text = "[systems.envtest]\n";
    std::env::set_var("CLIENT_ENVTEST__CB_FAILURE_RATE", "0.3");
    let settings = Settings::load(text, ORIGIN).unwrap();
    assert_eq!(settings.system("envtest").unwrap().cb_failure_rate(), 0.3);
    assert_eq!(
        Settings::parse(text, ORIGIN)
            .unwrap()
            .system("envtest")
            .unwrap()
            .cb_failure_rate(),
        0.5
    );

    std::env::set_var("CLIENT_ENVTEST__CB_FAILURE_RATE", "lots");
    let err = Settings::load(text, ORIGIN).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert_eq!(err.variable_name(), Some("CLIENT_ENVTEST__CB_FAILURE_RATE"));
    std::env::remove_var("CLIENT_ENVTEST__CB_FAILURE_RATE");

    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"http://\xff");
        std::env::set_var("CLIENT_ENVTEST__BASE_URL", bad);
        let err = Settings::load(text, ORIGIN).unwrap_err();
        std::env::remove_var("CLIENT_ENVTEST__BASE_URL");
        assert_eq!(err.kind(), ErrorKind::Malformed);
        assert_eq!(err.variable_name(), Some("CLIENT_ENVTEST__BASE_URL"));
        assert!(err.to_string().contains("UTF-8"), "{err}");
    }
    Settings::load(text, ORIGIN).unwrap();
}

#[test]
fn an_env_override_with_an_empty_part_or_an_overflowing_count_says_so() {
    let variable = "CLIENT___CB_MIN_CALLS";
    let err = Settings::load_with_env("[systems.sber]", ORIGIN, [(variable, "5")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
    assert_eq!(err.variable_name(), Some(variable));
    assert!(err.message().contains("both parts named"), "{err}");
    // No key at all: not one of ours, so the application's.
    Settings::load_with_env("[systems.sber]", ORIGIN, [("CLIENT_SBER__", "5")]).unwrap();
    let err = Settings::load_with_env(
        "[systems.sber]",
        ORIGIN,
        [("CLIENT_SBER__CB_MIN_CALLS", "99999999999999999999")],
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
    assert!(err.message().contains("too large"), "{err}");
}

#[test]
fn the_open_periods_keys_default_to_the_guides_fixed_30_s_and_a_5_minute_cap() {
    let s = sber("").unwrap();
    assert_eq!(s.cb_open_max(), secs(300.0));
    assert_eq!(s.cb_open_backoff(), 1.0);
    assert_eq!(s.cb_open_jitter(), 0.0);
    // A longer open period raises the default cap with it.
    let long = sber("cb_open_duration = \"10m\"").unwrap();
    assert_eq!(long.cb_open_max(), secs(600.0));
    // A cap below the open period is refused, naming both keys.
    let err = sber("cb_open_duration = 60\ncb_open_max = 30").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Order, "{err}");
    assert!(
        err.to_string().contains("cb_open_duration ≤ cb_open_max"),
        "{err}"
    );
    // An override too.
    let err = sber_env("", &[("CLIENT_SBER__CB_OPEN_MAX", "10")]).unwrap_err();
    assert!(
        err.to_string().contains("CLIENT_SBER__CB_OPEN_MAX"),
        "{err}"
    );
}
