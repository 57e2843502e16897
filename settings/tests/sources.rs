//! Where settings come from and how they are written: a file mounted at run time checked
//! against the compiled systems, `[defaults]`, durations with units, settings built by
//! code or deserialised, and errors that read well at startup.

use std::time::Duration;

use outbound_guard_settings::__private::{candidate_files, tried, workspace_root, CandidateKind};
use outbound_guard_settings::{
    ErrorKind, Key, Loader, Settings, SettingsError, SystemSettings, PATH_VARIABLE,
};

const ORIGIN: &str = "resilience.toml";

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "outbound-guard-settings-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn no_env() -> Loader {
    Loader::new().env(std::iter::empty::<(String, String)>())
}

#[test]
fn a_missing_system_names_what_declared_it() {
    let settings = "[systems.sber]\n";
    let err = no_env()
        .__require_declared([
            ("sber", "`#[circuit_breaker]` on `refund`"),
            (
                "customer",
                "`#[guarded(system = \"customer\")]` on `CustomerAdapter`",
            ),
            ("customer", "`outbound_guard::calls!`"),
        ])
        .parse(settings, ORIGIN)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "resilience.toml: missing `[systems.customer]`: this binary calls it, declared by `#[guarded(system = \"customer\")]` on `CustomerAdapter` and `outbound_guard::calls!`; add a `[systems.customer]` table (the settings hold `sber`)"
    );

    let err = no_env()
        .require_systems(["ledger"])
        .parse(settings, ORIGIN)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "resilience.toml: missing `[systems.ledger]`: it is required of these settings; add a `[systems.ledger]` table (the settings hold `sber`)"
    );
}

#[test]
fn a_mounted_file_is_read_validated_and_checked_for_the_compiled_systems() {
    let dir = temp_dir("mounted");
    let path = dir.join("resilience.toml");
    std::fs::write(
        &path,
        "[systems.sber]\ncb_failure_rate = 0.3\n[systems.extra]\n",
    )
    .unwrap();

    let settings = no_env().require_systems(["sber"]).read(&path).unwrap();
    assert_eq!(settings.system("sber").unwrap().cb_failure_rate(), 0.3);
    assert_eq!(settings.origin(), path.display().to_string());

    let err = no_env()
        .require_systems(["sber", "customer", "ledger"])
        .read(&path)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingSystem);
    assert_eq!(err.system_name(), Some("customer"));
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}: missing ", path.display())),
        "{text}"
    );
    assert!(
        text.contains("`[systems.customer]`, `[systems.ledger]`"),
        "{text}"
    );
    assert!(text.contains("the settings hold `extra`, `sber`"), "{text}");

    // The same rules as the compiled-in file.
    std::fs::write(&path, "[systems.sber]\ncb_failure_rate = 3\n").unwrap();
    let err = no_env().read(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    assert_eq!(err.key().map(Key::name), Some("cb_failure_rate"));

    // A missing file, named as given.
    let err = Settings::from_path("no/such/resilience.toml", &["sber"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(
        err.to_string()
            .starts_with("no/such/resilience.toml: cannot read the settings file"),
        "{err}"
    );
}

#[test]
fn a_variable_can_name_the_mounted_file_instead_of_the_compiled_one() {
    let dir = temp_dir("variable");
    let path = dir.join("mounted.toml");
    std::fs::write(&path, "[systems.sber]\nread_timeout = 10\n").unwrap();
    let compiled = "[systems.sber]\n[systems.customer]\n";
    let path_text = path.display().to_string();

    let mounted = Loader::new()
        .env([(PATH_VARIABLE, path_text.as_str())])
        .parse_or_mounted(compiled, ORIGIN)
        .unwrap();
    assert_eq!(mounted.origin(), path_text);
    assert_eq!(mounted.names().collect::<Vec<_>>(), ["sber"]);

    let compiled_only = no_env().parse_or_mounted(compiled, ORIGIN).unwrap();
    assert_eq!(compiled_only.names().count(), 2);

    // The mounted file must still hold what the binary calls.
    let err = Loader::new()
        .env([(PATH_VARIABLE, path_text.as_str())])
        .require_systems(["sber", "customer"])
        .parse_or_mounted(compiled, ORIGIN)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingSystem);

    let err = Loader::new()
        .env([(PATH_VARIABLE, "/nonexistent/resilience.toml")])
        .parse_or_mounted(compiled, ORIGIN)
        .unwrap_err();
    assert_eq!(err.variable_name(), Some(PATH_VARIABLE));
    assert!(
        err.to_string()
            .contains("names `/nonexistent/resilience.toml`"),
        "{err}"
    );
}

#[test]
fn defaults_are_a_template_for_every_system_not_a_shared_breaker() {
    let text = r"
        [defaults]
        cb_failure_rate = 0.3
        read_timeout = 10
        cb_window_size = 20

        [systems.sber]

        [systems.customer]
        cb_failure_rate = 0.5
    ";
    let env = [("CLIENT_SBER__CB_WINDOW_SIZE", "30")];
    let settings = Settings::load_with_env(text, ORIGIN, env).unwrap();
    assert_eq!(settings.names().collect::<Vec<_>>(), ["customer", "sber"]);
    let sber = settings.system("sber").unwrap();
    let customer = settings.system("customer").unwrap();
    assert_eq!(sber.cb_failure_rate(), 0.3);
    assert_eq!(
        customer.cb_failure_rate(),
        0.5,
        "the system's own value wins"
    );
    assert_eq!(sber.cb_window_size(), 30, "the environment wins");
    assert_eq!(customer.cb_window_size(), 20);
    // Derived values follow the template's values.
    assert_eq!(customer.cb_slow_threshold(), Duration::from_secs(5));

    // A bad default is reported where it is written, or as coming from it.
    let err = Settings::parse("[defaults]\ncb_failure_rat = 0.3\n", ORIGIN).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey);
    assert!(
        err.to_string()
            .starts_with("resilience.toml:2:1: [defaults]: unknown key `cb_failure_rat`; did you mean `cb_failure_rate`?"),
        "{err}"
    );
    let err =
        Settings::parse("[defaults]\ncb_failure_rate = 2\n[systems.sber]\n", ORIGIN).unwrap_err();
    assert_eq!(err.system_name(), Some("sber"));
    assert!(err.message().contains("`[defaults]`"), "{err}");
    // The line is the one in `[defaults]` where the value is written.
    assert!(
        err.to_string()
            .starts_with("resilience.toml:2:19: [systems.sber] `cb_failure_rate`: got 2,"),
        "{err}"
    );
    let err = Settings::parse("[defaults]\nbase_url = \"http://x.test\"\n", ORIGIN).unwrap_err();
    assert!(err.message().contains("own address"), "{err}");
    let err = Settings::parse("defaults = 3\n", ORIGIN).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Syntax);
}

#[test]
fn durations_are_seconds_or_strings_with_units() {
    let text = r#"
        [systems.sber]
        connect_timeout = "500ms"
        read_timeout = "10s"
        total_timeout = "1m 30s"
        cb_open_duration = 2.5
        bulkhead_wait = "0s"
    "#;
    let sber = Settings::parse(text, ORIGIN).unwrap();
    let sber = sber.system("sber").unwrap();
    assert_eq!(sber.connect_timeout(), Duration::from_millis(500));
    assert_eq!(sber.read_timeout(), Duration::from_secs(10));
    assert_eq!(sber.total_timeout(), Duration::from_secs(90));
    assert_eq!(sber.cb_open_duration(), Duration::from_millis(2500));
    assert_eq!(sber.bulkhead_wait(), Duration::ZERO);

    let s = Settings::parse("[systems.sber]\ncb_open_duration = \"2.5s\"\n", ORIGIN).unwrap();
    assert_eq!(
        s.system("sber").unwrap().cb_open_duration(),
        Duration::from_millis(2500)
    );
    // Finer than a nanosecond, which `humantime` refuses: read all the same.
    let s = Settings::parse("[systems.sber]\nbulkhead_wait = \"3.0001us\"\n", ORIGIN).unwrap();
    assert_eq!(
        s.system("sber").unwrap().bulkhead_wait(),
        Duration::from_micros(3)
    );
    let env = [("CLIENT_SBER__CB_OPEN_DURATION", "750ms")];
    let settings = Settings::load_with_env("[systems.sber]", ORIGIN, env).unwrap();
    assert_eq!(
        settings.system("sber").unwrap().cb_open_duration(),
        Duration::from_millis(750)
    );

    let err =
        Settings::parse("[systems.sber]\nread_timeout = \"10 parsecs\"\n", ORIGIN).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert!(err.message().contains("\"500ms\""), "{err}");
}

#[test]
fn a_duration_that_is_surely_milliseconds_is_rejected_with_the_unit_suggested() {
    let err = Settings::parse("[systems.sber]\ntotal_timeout = 35000\n", ORIGIN).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    assert_eq!(err.key().map(Key::name), Some("total_timeout"));
    assert!(err.message().contains("unit mistake"), "{err}");
    assert!(err.message().contains("\"35000ms\""), "{err}");
    assert!(err.message().contains("(9.7 hours)"), "{err}");
    let env = [("CLIENT_SBER__CB_OPEN_DURATION", "30000")];
    let err = Settings::load_with_env("[systems.sber]", ORIGIN, env).unwrap_err();
    assert!(err.message().contains("\"30000ms\""), "{err}");
    // Said with a unit, it is taken as meant.
    let s = Settings::parse("[systems.sber]\ncb_open_duration = \"20m\"\n", ORIGIN).unwrap();
    assert_eq!(
        s.system("sber").unwrap().cb_open_duration(),
        Duration::from_secs(1200)
    );
    let s = Settings::parse("[systems.sber]\ntotal_timeout = \"35000ms\"\n", ORIGIN).unwrap();
    assert_eq!(
        s.system("sber").unwrap().total_timeout(),
        Duration::from_secs(35)
    );
    // Under the limit, a number is seconds as the guide writes them.
    Settings::parse("[systems.sber]\ncb_open_duration = 999\n", ORIGIN).unwrap();
}

#[test]
fn errors_read_well_in_a_main_returning_a_boxed_error() {
    let err = Settings::parse("[systems.sber]\ncb_failure_rat = 0.3\n", ORIGIN).unwrap_err();
    let shown = err.to_string();
    assert_eq!(format!("{err:?}"), shown);
    let boxed: Box<dyn std::error::Error> = Box::new(err.clone());
    assert_eq!(format!("{boxed:?}"), shown);
    // Key names in a file's message are the file's spelling.
    assert!(shown.contains("did you mean `cb_failure_rate`?"), "{shown}");
    assert!(!shown.contains("CB_FAILURE_RATE"), "{shown}");
    // The fields are there for whoever asks.
    assert!(format!("{err:#?}").contains("kind: UnknownKey"));
}

#[test]
fn settings_built_by_code_go_through_the_same_rules() {
    let template = SystemSettings::builder("template")
        .cb_failure_rate(0.3)
        .read_timeout(Duration::from_secs(10));
    let sber = template
        .named("sber")
        .base_url("http://127.0.0.1:8081")
        .build()
        .unwrap();
    let customer = template
        .named("customer")
        .cb_failure_rate(0.5)
        .build()
        .unwrap();
    assert_eq!(sber.cb_failure_rate(), 0.3);
    assert_eq!(sber.cb_slow_threshold(), Duration::from_secs(5));
    assert_eq!(sber.base_url(), Some("http://127.0.0.1:8081"));
    assert_eq!(customer.cb_failure_rate(), 0.5);
    let settings = Settings::from_systems([sber.clone(), customer]).unwrap();
    assert_eq!(settings.names().collect::<Vec<_>>(), ["customer", "sber"]);

    // No way around the rules.
    let bad = [
        SystemSettings::builder("sber").cb_failure_rate(0.0).build(),
        SystemSettings::builder("sber").cb_window_size(0).build(),
        SystemSettings::builder("sber")
            .connect_timeout(Duration::from_secs(40))
            .build(),
        SystemSettings::builder("sber")
            .total_timeout(Duration::MAX)
            .build(),
        SystemSettings::builder("default").build(),
        SystemSettings::builder("Sber").build(),
        SystemSettings::builder("sber").base_url("ftp://x").build(),
    ];
    for result in bad {
        let err = result.unwrap_err();
        assert!(
            err.to_string().starts_with("settings built in code: "),
            "{err}"
        );
    }
    let err = Settings::from_systems([sber.clone(), sber]).unwrap_err();
    assert!(err.message().contains("two systems named `sber`"), "{err}");
}

#[test]
fn settings_deserialise_through_the_same_rules() {
    /// A service's own configuration, nesting the settings.
    #[derive(serde::Deserialize)]
    struct Config {
        #[allow(dead_code)]
        port: u16,
        resilience: Settings,
        ledger: SystemSettings,
    }

    let json = serde_json::json!({
        "defaults": { "cb_open_duration": "5s" },
        "systems": {
            "sber": { "base_url": "http://127.0.0.1:8081", "cb_failure_rate": 0.3 },
            "customer": {}
        }
    });
    let settings: Settings = serde_json::from_value(json).unwrap();
    let sber = settings.system("sber").unwrap();
    assert_eq!(sber.cb_failure_rate(), 0.3);
    assert_eq!(sber.cb_open_duration(), Duration::from_secs(5));

    // Nested in a service's own configuration.
    let config: Config = serde_json::from_value(serde_json::json!({
        "port": 8080,
        "resilience": { "systems": { "sber": {} } },
        "ledger": { "name": "ledger", "read_timeout": 5, "total_timeout": "6s" },
    }))
    .unwrap();
    assert_eq!(config.resilience.names().collect::<Vec<_>>(), ["sber"]);
    assert_eq!(config.ledger.name(), "ledger");
    assert_eq!(config.ledger.total_timeout(), Duration::from_secs(6));

    let bad = [
        serde_json::json!({ "systems": { "sber": { "cb_failure_rate": 2 } } }),
        serde_json::json!({ "systems": { "default": {} } }),
        serde_json::json!({ "systems": { "sber": { "read_timeout": 40 } } }),
        serde_json::json!({ "system": {} }),
    ];
    for value in bad {
        let err = serde_json::from_value::<Settings>(value.clone()).err();
        assert!(err.is_some(), "{value} was accepted");
    }
    let err = serde_json::from_value::<SystemSettings>(serde_json::json!({ "read_timeout": 5 }))
        .unwrap_err();
    assert!(err.to_string().contains("`name`"), "{err}");
}

#[test]
fn candidate_files_show_paths_as_the_user_writes_them() {
    let root = temp_dir("workspace");
    let member = root.join("crates").join("adapters");
    std::fs::create_dir_all(&member).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/*\"]\n",
    )
    .unwrap();
    let manifest = "[package]\nname = \"adapters\"\n";
    std::fs::write(member.join("Cargo.toml"), manifest).unwrap();

    assert_eq!(workspace_root(&member).as_deref(), Some(root.as_path()));
    let found = candidate_files(&member, manifest, Some(&root)).unwrap();
    let kinds: Vec<CandidateKind> = found.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [CandidateKind::ManifestDir, CandidateKind::WorkspaceRoot]
    );
    assert_eq!(found[1].shown, "../../resilience.toml");
    assert_eq!(found[1].path, root.join("resilience.toml"));
    assert_eq!(
        tried(&found),
        "`resilience.toml` (next to this crate's Cargo.toml), `../../resilience.toml` (the workspace root's)"
    );
    // The root crate itself: one candidate.
    assert_eq!(candidate_files(&root, "", Some(&root)).unwrap().len(), 1);

    let bad: Result<_, SettingsError> = candidate_files(
        &member,
        "[package.metadata.outbound-guard]\nsettings = 3\n",
        None,
    );
    assert!(bad.unwrap_err().message().contains("path string"));
    // A blank path names no file.
    for blank in ["", "  "] {
        let manifest = format!("[package.metadata.outbound-guard]\nsettings = \"{blank}\"\n");
        let bad = candidate_files(&member, &manifest, None);
        assert!(
            bad.unwrap_err().message().contains("path string"),
            "{blank:?}"
        );
    }
    let bad = candidate_files(
        &member,
        "[package.metadata.outbound-guard]\nsetting = \"x\"\n",
        None,
    );
    assert!(bad.unwrap_err().message().contains("unknown key `setting`"));
}

#[test]
fn settings_serialise_to_what_they_deserialise_from() {
    let text = r#"
        [defaults]
        connect_timeout = "250ms"
        [systems.sber]
        base_url = "http://127.0.0.1:8081"
        cb_failure_rate = 0.3
        read_timeout = 2.5
        [systems.customer]
        cb_open_duration = "1m 30s"
    "#;
    let settings = Settings::parse(text, ORIGIN).unwrap();
    let json = serde_json::to_value(&settings).unwrap();
    assert_eq!(json["systems"]["sber"]["read_timeout"], "2s 500ms");
    assert_eq!(json["systems"]["customer"]["connect_timeout"], "250ms");
    let back: Settings = serde_json::from_value(json).unwrap();
    let systems = |s: &Settings| s.systems().cloned().collect::<Vec<_>>();
    assert_eq!(systems(&back), systems(&settings));

    let sber = settings.system("sber").unwrap();
    let json = serde_json::to_value(sber).unwrap();
    assert_eq!(json["name"], "sber");
    let back: SystemSettings = serde_json::from_value(json).unwrap();
    assert_eq!(&back, sber);
}
