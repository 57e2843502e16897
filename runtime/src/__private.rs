//! What `#[circuit_breaker]` and `#[outbound_guard::adapter]` expand to call. Not a public
//! API: its names may change in any release.

pub use crate::wiring::Guarded;
pub use outbound_guard_macros::__settings_file as settings_file;

use std::future::Future;
use std::marker::PhantomData;

use crate::call::{CallOptions, GuardedCall, Guarding};
use crate::error::CircuitBreakerError;
use crate::guard::Guard;
use crate::wiring::SystemAdapter;

/// The adapter's guard, for a method that names no system and calls its type's
/// (`<A as SystemAdapter>::SYSTEM`): a type that declares none is one error here.
#[inline]
pub fn declared<A: SystemAdapter + ?Sized>(adapter: &A) -> &Guard {
    adapter.guard()
}

/// One guarded call of a method of `system`, through its adapter's `guard`: the guard's
/// [`GuardedCall`], or, when the guard is another system's (an adapter built from a
/// struct literal with the wrong guard), a call refused on its first poll with
/// [`Cause::WrongGuard`](crate::Cause::WrongGuard) naming both systems, which never reaches that guard's bulkhead
/// or breaker.
#[inline]
pub fn call<T, E, F>(
    guard: &Guard,
    system: &'static str,
    options: CallOptions<E>,
    future: F,
) -> GuardedCall<F, CallOptions<E>>
where
    F: Future<Output = Result<T, E>>,
{
    // Built here rather than through a helper generic over the call: in a debug build,
    // each function generic over it is compiled once per guarded method. The stage
    // first: the fields after it are moves alone, so the call is built in its place.
    let stage = crate::call::arrival(guard, system);
    GuardedCall {
        call: future,
        guarding: Guarding {
            timer: None,
            stage,
            judge: options,
        },
    }
}

/// A system's name as a type, `Name<'s', 'b', 'e', 'r'>` for `sber`: sixteen characters
/// a level, a longer name going on in `Rest`. The derive writes
/// `impl Declares<Name<…>> for Adapter` for the system it declares, and a method or
/// block naming one reaches the guard through [`Declares::guard_of`], so that one
/// naming another system is a type error on its literal, found by `cargo check` too, in
/// generic impls as well. Never built: a type only.
pub struct Name<
    const C0: char = '\0',
    const C1: char = '\0',
    const C2: char = '\0',
    const C3: char = '\0',
    const C4: char = '\0',
    const C5: char = '\0',
    const C6: char = '\0',
    const C7: char = '\0',
    const C8: char = '\0',
    const C9: char = '\0',
    const C10: char = '\0',
    const C11: char = '\0',
    const C12: char = '\0',
    const C13: char = '\0',
    const C14: char = '\0',
    const C15: char = '\0',
    Rest: ?Sized = (),
>(PhantomData<Rest>);

/// An adapter that may call the system named `N`: its derive declares `N`, or declares
/// no system (then it is implemented for every name, and the guard's system is checked
/// on each call).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an adapter of this system",
    label = "add `#[derive(outbound_guard::Guarded)]` to `{Self}`; if it has it, name the system its `#[guarded(system = …)]` declares",
    note = "an adapter holds one system's guard and calls that system (R-RES-ISO-1): a method or block of a type that declares its system may leave `system` out"
)]
pub trait Declares<N: ?Sized>: Guarded {
    /// The adapter's guard, for a method that names its system `N` (on itself or its
    /// block): called as `Declares::<Name<…>>::guard_of(self)`, spanned on the
    /// literal, so that an adapter whose derive declares another system, or that
    /// derives no `Guarded`, is one error there, without a note about a function's
    /// bound.
    #[inline]
    fn guard_of(&self) -> &Guard {
        self.guard()
    }
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
/// system literal of a `#[derive(Guarded)] #[guarded(system = …)]`, an
/// `#[adapter(system = …)]` block, a `#[circuit_breaker(system = …)]` method outside a
/// block, and a [`calls!`](crate::calls) system.
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
