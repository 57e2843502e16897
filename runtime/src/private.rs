//! What `#[circuit_breaker]` and `#[outbound_guard::adapter]` expand to call. Not a public
//! API: its names may change in any release.

pub use crate::wiring::Guarded;
pub use outbound_guard_macros::__settings_file as settings_file;

use crate::call::CallOptions;
use crate::error::CircuitBreakerError;
use crate::guard::Guard;
use crate::wiring::SystemAdapter;

/// The adapter's guard, of the system its type declares (`#[guarded(system = "…")]`).
///
/// That the guard is the system's is checked where the adapter is built
/// ([`Guards::adapter`](crate::Guards::adapter), [`SystemAdapter::wired`]), not on every
/// call; the bound makes a type that declares no system a compile error here.
#[inline]
pub fn guard<A: SystemAdapter + ?Sized>(adapter: &A) -> &Guard {
    adapter.guard()
}

/// The error type of a method's declared `Result` (also through an alias such as
/// `io::Result<T>`).
pub trait ResultType {
    /// `E` of `Result<T, E>`.
    type Error;
}

impl<T, E> ResultType for Result<T, E> {
    type Error = E;
}

/// The method's `error_map`, as a function pointer to the method's own error type `R`'s
/// `E`: a wrong signature, or a function returning another port's error, is one type
/// error on the user's path naming the signature needed
/// (`fn(CircuitBreakerError) -> E`), not a suggestion to add a `From` impl.
#[inline]
pub fn error_map<R: ResultType>(
    error_map: fn(CircuitBreakerError) -> R::Error,
) -> fn(CircuitBreakerError) -> R::Error {
    error_map
}

/// The method's options, typed by its declared `Result` `R`: a `failure_if` of the wrong
/// signature is one type error on the user's path naming the signature needed
/// (`fn(&E) -> bool`).
#[inline]
pub const fn options<R: ResultType>() -> CallOptions<R::Error> {
    CallOptions::new()
}

/// A guarded call's result as the method returns it: the call's own `Result`, or the
/// guard's refusal through the method's `error_map`.
#[inline]
pub fn flatten<T, E>(
    judged: Result<Result<T, E>, CircuitBreakerError>,
    error_map: fn(CircuitBreakerError) -> E,
) -> Result<T, E> {
    judged.unwrap_or_else(|refused| Err(error_map(refused)))
}

pub use linkme;

/// A system this binary calls, and what declared it: an entry of `CALLED_SYSTEMS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Called {
    /// The system's name: `sber`.
    pub system: &'static str,
    /// What declared it, as an error names it: `` `#[guarded(system = "sber")]` on
    /// `SberAdapter` ``.
    pub by: &'static str,
}

/// The systems named by a guard in any crate linked into the binary: one entry per
/// `#[derive(Guarded)] #[guarded(system = …)]` and [`calls!`](crate::calls) system (a
/// guarded method's system is its type's derive's).
#[linkme::distributed_slice]
pub static CALLED_SYSTEMS: [Called];

/// What `settings!()` does: the file `RESILIENCE_SETTINGS` names if it is set (a file
/// mounted at run time), required to hold every system this binary calls (each system
/// of the compiled-in file and each in `CALLED_SYSTEMS`); else the compiled-in `text`
/// named `origin`, whose systems the attributes were checked against at compile time.
/// Either way with `loader`'s environment overrides.
///
/// # Errors
///
/// As [`Loader::parse_or_mounted`](outbound_guard_settings::Loader::parse_or_mounted):
/// an unreadable mounted file names its path and the variable; a missing system is named.
pub fn load_settings(
    loader: outbound_guard_settings::Loader,
    text: &str,
    origin: &str,
) -> Result<outbound_guard_settings::Settings, outbound_guard_settings::SettingsError> {
    if loader.mounted().is_some() {
        loader
            .__require_declared(called_systems(text, origin))
            .parse_or_mounted(text, origin)
    } else {
        loader.parse(text, origin)
    }
}

/// The systems this binary calls, each with what declared it: every guard's (link
/// time) and the compiled-in file's, sorted.
pub fn called_systems(text: &str, origin: &str) -> Vec<(String, String)> {
    let mut systems: Vec<(String, String)> = CALLED_SYSTEMS
        .iter()
        .map(|c| (c.system.to_owned(), c.by.to_owned()))
        .collect();
    // The compiled-in file alone, without the environment: only its system names are
    // wanted (it was checked at compile time; if it no longer parses alone, its errors
    // are reported when it is loaded).
    if let Ok(compiled) = outbound_guard_settings::Settings::load_with_env(
        text,
        origin,
        core::iter::empty::<(&str, &str)>(),
    ) {
        let by = format!("its table in `{origin}`");
        systems.extend(compiled.names().map(|name| (name.to_owned(), by.clone())));
    }
    systems.sort();
    systems.dedup();
    systems
}
