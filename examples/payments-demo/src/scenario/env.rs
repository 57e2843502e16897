//! The demo's settings overrides: the very `CLIENT_<SYSTEM>__<KEY>` variables a user
//! would set, put into the process environment before the settings are loaded — only
//! where the user has not set them — so the breaker's 30 s and timeouts shrink to
//! demo size.

use outbound_guard::settings::{env_var, Key};

/// The demo's defaults, applied where the environment does not set them.
pub const DEMO_DEFAULTS: &[(&str, Key, &str)] = &[
    ("sber", Key::ConnectTimeout, "0.25"),
    ("sber", Key::ReadTimeout, "1.2"),
    ("sber", Key::TotalTimeout, "2"),
    ("sber", Key::CbOpenDuration, "3"),
    ("customer", Key::ConnectTimeout, "0.25"),
    ("customer", Key::ReadTimeout, "1.2"),
    ("customer", Key::TotalTimeout, "2"),
    ("customer", Key::CbOpenDuration, "3"),
];

/// Where a variable's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The demo set it (the user had not).
    Demo,
    /// The user set it; the demo left it alone.
    User,
    /// The demo points the system at its fake server, replacing the user's value.
    Fake {
        /// The value the user had set, if any.
        replaced: Option<String>,
    },
}

/// One variable as the demo runs with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSetting {
    /// `CLIENT_SBER__CB_OPEN_DURATION`.
    pub name: String,
    /// Its value.
    pub value: String,
    /// Where the value came from.
    pub source: Source,
}

/// Sets the demo's variables in the process environment: the base URLs of the fake
/// servers always (the demo never calls anything but its own fakes on 127.0.0.1), the
/// [`DEMO_DEFAULTS`] where unset. Returns every `CLIENT_` variable in effect.
///
/// Call it before any other thread starts: it changes the process environment.
pub fn apply(fakes: &[(&str, String)]) -> Vec<EnvSetting> {
    let mut settings = Vec::new();
    for (system, url) in fakes {
        let name = env_var(system, Key::BaseUrl);
        let replaced = std::env::var(&name).ok().filter(|v| v != url);
        std::env::set_var(&name, url);
        settings.push(EnvSetting {
            name,
            value: url.clone(),
            source: Source::Fake { replaced },
        });
    }
    for (system, key, value) in DEMO_DEFAULTS {
        let name = env_var(system, *key);
        if std::env::var_os(&name).is_none() {
            std::env::set_var(&name, value);
            settings.push(EnvSetting {
                name,
                value: (*value).to_owned(),
                source: Source::Demo,
            });
        }
    }
    let mut user: Vec<EnvSetting> = std::env::vars()
        .filter(|(name, _)| {
            name.starts_with(outbound_guard::settings::ENV_PREFIX) && name.contains("__")
        })
        .filter(|(name, _)| !settings.iter().any(|s| &s.name == name))
        .map(|(name, value)| EnvSetting {
            name,
            value,
            source: Source::User,
        })
        .collect();
    user.sort_by(|a, b| a.name.cmp(&b.name));
    settings.extend(user);
    settings
}
