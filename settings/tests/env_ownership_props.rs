//! The ownership rule as properties, against a simple model: variables built from words
//! far from every key never change the outcome; one edit of a key (a typo) of a known
//! system always stops startup naming the variable; a key of ours for a system the file
//! lacks always does too.

use outbound_guard_settings::{ErrorKind, Key, Settings, KEYS};
use proptest::prelude::*;

const FILE: &str = "[systems.sber]\ncb_failure_rate = 0.3\n[systems.customer]\n";

fn load(vars: &[(String, String)]) -> Result<Settings, outbound_guard_settings::SettingsError> {
    Settings::load_with_env(FILE, "resilience.toml", vars.iter().cloned())
}

/// Words an application's own variables are made of: none within two edits of a key.
const WORDS: [&str; 10] = [
    "API", "KEY", "TOKEN", "SECRET", "PASSWORD", "CERT", "PATH", "USER", "ID", "REGION",
];

/// `CLIENT_…` names of the application: `CLIENT_<WORDS>` or `CLIENT_<SYSTEM>__<WORDS>`,
/// the system one of ours or not.
fn application_variable() -> impl Strategy<Value = String> {
    let words =
        prop::collection::vec(prop::sample::select(WORDS.to_vec()), 1..4).prop_map(|w| w.join("_"));
    let system = prop::sample::select(vec!["SBER", "CUSTOMER", "STRIPE", "PAYMENTS", "SBR"]);
    prop_oneof![
        words.clone().prop_map(|w| format!("CLIENT_{w}")),
        (system, words).prop_map(|(s, w)| format!("CLIENT_{s}__{w}")),
    ]
}

/// A key with one typo: a character deleted, doubled, or replaced by `X`.
fn typo() -> impl Strategy<Value = (Key, String)> {
    (
        prop::sample::select(KEYS.to_vec()),
        any::<prop::sample::Index>(),
        0..3u8,
    )
        .prop_map(|(key, at, edit)| {
            let mut name: Vec<char> = key.name().to_ascii_uppercase().chars().collect();
            let i = at.index(name.len());
            match edit {
                0 => {
                    name.remove(i);
                }
                1 => name.insert(i, name[i]),
                _ => name[i] = 'X',
            }
            (key, name.into_iter().collect())
        })
}

proptest! {
    #[test]
    fn the_applications_variables_never_change_the_outcome(
        names in prop::collection::vec(application_variable(), 0..6),
        value in ".{0,12}",
        rate in prop::sample::select(vec!["0.4", "7", "x"]),
    ) {
        let ours = vec![("CLIENT_SBER__CB_FAILURE_RATE".to_owned(), rate.to_owned())];
        let mut with = ours.clone();
        with.extend(names.iter().map(|n| (n.clone(), value.clone())));
        prop_assert_eq!(load(&with), load(&ours));
    }

    #[test]
    fn a_typo_of_a_key_for_a_known_system_stops_startup(
        (key, typed) in typo(),
        system in prop::sample::select(vec!["SBER", "CUSTOMER"]),
    ) {
        prop_assume!(Key::from_name(&typed.to_ascii_lowercase()).is_none());
        let variable = format!("CLIENT_{system}__{typed}");
        let err = load(&[(variable.clone(), "1".to_owned())]).unwrap_err();
        prop_assert_eq!(err.kind(), ErrorKind::UnknownKey);
        prop_assert_eq!(err.variable_name(), Some(variable.as_str()));
        let lower = system.to_ascii_lowercase();
        prop_assert_eq!(err.system_name(), Some(lower.as_str()));
        // The suggestion is the key the typo came from (no two keys are within two
        // edits of each other), spelled as a variable.
        let suggested = format!(
            "did you mean `CLIENT_{system}__{}`?",
            key.name().to_ascii_uppercase()
        );
        prop_assert!(err.message().contains(&suggested), "{}", err);
    }

    #[test]
    fn a_key_of_ours_for_a_system_the_file_lacks_stops_startup(
        key in prop::sample::select(KEYS.to_vec()),
        system in "[A-Z][A-Z0-9]{0,8}",
    ) {
        prop_assume!(system != "SBER" && system != "CUSTOMER");
        let variable = format!("CLIENT_{system}__{}", key.name().to_ascii_uppercase());
        let err = load(&[(variable.clone(), "1".to_owned())]).unwrap_err();
        prop_assert_eq!(err.kind(), ErrorKind::UnknownSystem);
        prop_assert_eq!(err.variable_name(), Some(variable.as_str()));
    }
}
