//! What `#[circuit_breaker]` expands to calls. Not a public API: its names may change in
//! any release.

pub use crate::Guarded;

use crate::Guard;

/// The adapter's guard, checked to be the guard of `system`.
///
/// # Panics
///
/// If the adapter holds another system's guard: a wiring mistake that would count this
/// system's calls against that system's breaker. It shows on the first call.
#[inline]
pub fn guard<'a, A: Guarded + ?Sized>(adapter: &'a A, system: &str) -> &'a Guard {
    let guard = adapter.guard();
    if guard.system() != system {
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
