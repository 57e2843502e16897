//! What `#[circuit_breaker]` and `#[resilience::adapter]` expand to call. Not a public
//! API: its names may change in any release.

pub use crate::Guarded;
pub use resilience_macros::__settings_file as settings_file;

use crate::{CircuitBreakerError, Guard};

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

/// The guard's error through the method's `error_map`. Taking a function pointer makes
/// a wrong `error_map` one type error on the user's path that names the signature
/// needed, `fn(CircuitBreakerError) -> E` with `E` the method's error type.
#[inline]
pub fn map_error<E>(error_map: fn(CircuitBreakerError) -> E, error: CircuitBreakerError) -> E {
    error_map(error)
}

/// Compile-time check that an `#[adapter]` block's system is the one its type's derive
/// names, if it names one.
pub const fn same_system(declared: &str, block: &str) -> bool {
    let (a, b) = (declared.as_bytes(), block.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
