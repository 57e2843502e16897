//! The settings schema of [`outbound-guard`](https://docs.rs/outbound-guard): one table per
//! external system in `resilience.toml`, the guide's defaults, the derived values, the
//! validation rules and the environment overrides.
//!
//! The same rule set runs twice: at compile time inside `#[circuit_breaker]`, which
//! checks the annotated system's entry, and at startup, after environment variables such
//! as `CLIENT_SBER__CB_FAILURE_RATE=0.5` have been applied.
//!
//! ```
//! use outbound_guard_settings::Settings;
//!
//! let toml = r#"
//!     [defaults]                 # a template copied into every system
//!     cb_open_duration = "10s"   # a duration with its unit; a bare number is seconds
//!
//!     [systems.sber]
//!     base_url = "http://127.0.0.1:8081"
//!     cb_failure_rate = 0.30
//!
//!     [systems.customer]
//! "#;
//! let env = [("CLIENT_SBER__CB_OPEN_DURATION", "5"), ("CLIENT_ID", "not ours")];
//! let settings = Settings::load_with_env(toml, "resilience.toml", env).unwrap();
//! let sber = settings.system("sber").unwrap();
//! assert_eq!(sber.cb_failure_rate(), 0.30);
//! assert_eq!(sber.cb_open_duration().as_secs(), 5);
//! assert_eq!(sber.cb_slow_threshold().as_secs(), 15); // read_timeout / 2
//! let customer = settings.system("customer").unwrap();
//! assert_eq!(customer.cb_failure_rate(), 0.5);
//! assert_eq!(customer.cb_open_duration().as_secs(), 10);
//! ```
//!
//! # Environment variables
//!
//! A variable `CLIENT_<SYSTEM>__<KEY>` is ours when `<KEY>` is one of our keys or a near
//! miss of one (then `<SYSTEM>` must exist, or startup stops with a did-you-mean); every
//! other variable under the prefix (`CLIENT_ID`, `CLIENT_STRIPE__API_KEY`) belongs to
//! the application and is left alone. The prefix is `CLIENT_` unless
//! [`Loader::prefix`] says otherwise.
//!
//! # Where the settings come from
//!
//! - compiled in: the file `#[circuit_breaker]` checked (`resilience.toml` next to the
//!   crate's `Cargo.toml`, unless `[package.metadata.outbound-guard] settings = "…"` names
//!   another; else the workspace root's), loaded with [`Settings::load`];
//! - mounted at run time: [`Settings::from_path`], or the compiled-in file unless
//!   [`PATH_VARIABLE`] names another ([`Loader::parse_or_mounted`]); either way checked
//!   to hold every system the binary was compiled against;
//! - built by code ([`SystemSettings::builder`], [`Settings::from_systems`]) or
//!   deserialised with serde (nested in a figment or config-rs configuration); both go
//!   through the same validation.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod build;
mod builder;
mod de;
mod env;
mod error;
#[doc(hidden)]
pub mod explain;
mod keys;
mod loader;
mod locate;
mod mode;
mod raw;
mod secret;
mod settings;
mod span;
mod suggest;
mod system;

pub use builder::SystemSettingsBuilder;
pub use error::{ErrorKind, Location, SettingsError};
pub use keys::{env_var, env_var_with_prefix, Key, ENV_PREFIX, KEYS};
pub use loader::{Loader, PATH_VARIABLE};
pub use locate::FILE_NAME;
pub use mode::CbMode;
pub use secret::{mask_url, MASK};
pub use settings::Settings;
pub use system::SystemSettings;

#[doc(hidden)]
pub mod __private {
    //! Shared with the `outbound-guard` crates (the macros, the runtime and
    //! [`build`](crate::build)), not public API: may change in any release.
    pub use crate::locate::{
        candidate_files, crate_candidates, tried, workspace_root, Candidate, CandidateKind,
        TRACKED_ENV,
    };
    pub use crate::raw::FORBIDDEN_SYSTEM;
    pub use crate::suggest::{did_you_mean, did_you_mean_as, quoted_list, suggest};
    pub use crate::system::UNITLESS_SECONDS_LIMIT;
}
