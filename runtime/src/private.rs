//! What `#[circuit_breaker]` and `#[outbound_guard::adapter]` expand to call. Not a public
//! API: its names may change in any release.

pub use crate::wiring::Guarded;
pub use outbound_guard_macros::__settings_file as settings_file;

use crate::call::CallOptions;
use crate::error::CircuitBreakerError;
use crate::guard::Guard;

/// The adapter's guard.
///
/// Wiring is checked where the adapter is built ([`Guards::adapter`](crate::Guards::adapter),
/// [`SystemAdapter::wired`](crate::SystemAdapter::wired)), not on every call. Debug
/// builds still check each call, for adapters built some other way.
///
/// # Panics
///
/// In debug builds, if the adapter holds another system's guard: a wiring mistake that
/// would count this system's calls against that system's breaker.
#[inline]
pub fn guard<'a, A: Guarded + ?Sized>(adapter: &'a A, system: &str) -> &'a Guard {
    let guard = adapter.guard();
    if cfg!(debug_assertions) && guard.system() != system {
        misrouted(guard.system(), system);
    }
    guard
}

#[cold]
#[inline(never)]
fn misrouted(held: &str, wanted: &str) -> ! {
    panic!(
        "a `{wanted}` method was called through the `{held}` guard: build this adapter with `guards.get(\"{wanted}\")`, so that `{wanted}` calls never count against the `{held}` breaker"
    )
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
