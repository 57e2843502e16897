//! Credentials in a `base_url` (the user-info's password, query values) never appear in
//! `Debug`, `Display` or an error, whichever path the value came by; the adapter still
//! gets the real value.

use outbound_guard_settings::{Settings, SettingsError, SystemSettings};

const PASSWORD: &str = "hunter2";
const TOKEN: &str = "t0k3n";
const URL: &str = "http://svc-user:hunter2@pay.example/api?token=t0k3n";

fn assert_no_secret(what: &str, text: &str) {
    assert!(
        !text.contains(PASSWORD),
        "{what} shows the password: {text}"
    );
    assert!(!text.contains(TOKEN), "{what} shows a query value: {text}");
}

/// Every way an error is shown: `Display`, `Debug`, `{:#?}` and the message alone.
fn assert_error_masked(error: &SettingsError) {
    assert_no_secret("Display of the error", &error.to_string());
    assert_no_secret("Debug of the error", &format!("{error:?}"));
    assert_no_secret("{:#?} of the error", &format!("{error:#?}"));
    assert_no_secret("the error's message", error.message());
    assert!(error.to_string().contains("***"), "{error}");
}

fn settings() -> Settings {
    Settings::parse(&format!("[systems.sber]\nbase_url = \"{URL}\"\n"), "inline").unwrap()
}

#[test]
fn debug_of_the_settings_masks_the_credentials_and_the_getter_keeps_them() {
    let settings = settings();
    let sber = settings.system("sber").unwrap();
    assert_no_secret("Debug of SystemSettings", &format!("{sber:?}"));
    assert_no_secret("{:#?} of SystemSettings", &format!("{sber:#?}"));
    assert_no_secret("Debug of Settings", &format!("{settings:?}"));
    assert_no_secret("{:#?} of Settings", &format!("{settings:#?}"));
    assert!(format!("{sber:?}").contains("http://svc-user:***@pay.example/api?token=***"));
    assert_eq!(sber.base_url(), Some(URL));
}

#[test]
fn a_refused_url_in_the_file_is_not_echoed() {
    for url in [
        "ftp://u:hunter2@pay.example/api?token=t0k3n",
        "svc-user:hunter2@pay.example/api?token=t0k3n",
        "http://u:hunter2@pay example/api?token=t0k3n",
    ] {
        let text = format!("[systems.sber]\nbase_url = \"{url}\"\n");
        let error = Settings::parse(&text, "resilience.toml").unwrap_err();
        assert_error_masked(&error);
    }
}

#[test]
fn a_refused_url_in_an_environment_override_is_not_echoed() {
    let error = Settings::load_with_env(
        "[systems.sber]\n",
        "resilience.toml",
        [(
            "CLIENT_SBER__BASE_URL",
            "ftp://u:hunter2@pay.example/api?token=t0k3n",
        )],
    )
    .unwrap_err();
    assert_eq!(error.variable_name(), Some("CLIENT_SBER__BASE_URL"));
    assert_error_masked(&error);
}

#[test]
fn a_valid_url_in_an_environment_override_is_used_and_masked_in_debug() {
    let settings = Settings::load_with_env(
        "[systems.sber]\n",
        "resilience.toml",
        [("CLIENT_SBER__BASE_URL", URL)],
    )
    .unwrap();
    let sber = settings.system("sber").unwrap();
    assert_eq!(sber.base_url(), Some(URL));
    assert_no_secret("Debug of overridden settings", &format!("{settings:?}"));
}

#[test]
fn a_syntax_error_on_the_line_of_a_url_does_not_quote_it() {
    let text = format!("[systems.sber]\nbase_url = \"{URL}\" oops\n");
    let error = Settings::parse(&text, "resilience.toml").unwrap_err();
    assert_error_masked(&error);
}

#[test]
fn a_url_refused_after_deserialising_or_building_is_not_echoed() {
    let error = serde_json::from_str::<SystemSettings>(
        r#"{"name": "sber", "base_url": "ftp://u:hunter2@pay.example/api?token=t0k3n"}"#,
    )
    .unwrap_err();
    assert_no_secret("a serde error", &error.to_string());

    let error = SystemSettings::builder("sber")
        .base_url("ftp://u:hunter2@pay.example/api?token=t0k3n")
        .build()
        .unwrap_err();
    assert_error_masked(&error);
}

#[test]
fn a_rule_broken_next_to_a_url_does_not_show_it() {
    let text = format!("[systems.sber]\nbase_url = \"{URL}\"\nconnect_timeout = 40\n");
    let error = Settings::parse(&text, "resilience.toml").unwrap_err();
    assert_no_secret("an ordering error", &error.to_string());
    assert_no_secret("an ordering error", &format!("{error:#?}"));
}
