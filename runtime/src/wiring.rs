//! How an adapter reaches its guard, and the check that it holds its own system's,
//! made where the adapter is built and again on each guarded call.

use crate::guard::Guard;

/// An adapter that holds its system's [`Guard`]. Derive it:
///
/// ```ignore
/// #[derive(outbound_guard::Guarded)]
/// struct SberAdapter {
///     guard: outbound_guard::Guard,
///     http: reqwest::Client,
/// }
/// ```
///
/// That is all a method guarded with its system named on it needs, as the design card
/// writes it:
/// `#[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]`.
/// With `#[guarded(system = "sber")]` beside the derive, the type also declares its
/// system ([`SystemAdapter`]), and its methods and `#[adapter]` blocks may leave `system`
/// out.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say which field holds its circuit-breaker guard",
    label = "a guarded method needs this adapter's `outbound_guard::Guard`",
    note = "add `#[derive(outbound_guard::Guarded)]` to `{Self}`, which keeps its system's `outbound_guard::Guard` in a field"
)]
pub trait Guarded {
    /// The adapter's guard.
    fn guard(&self) -> &Guard;
}

/// An adapter whose system is known at compile time, declared once on its derive:
/// `#[derive(Guarded)] #[guarded(system = "…")]`, which checks it against the settings
/// file. Its guarded methods and `#[outbound_guard::adapter]` blocks that name no system
/// call this one, and those that name one must name this one (a compile error
/// otherwise). Build the adapter through [`Guards::adapter`](crate::Guards::adapter), or
/// check it with [`wired`](Self::wired), and a guard of another system is refused there;
/// an adapter built some other way with another system's guard has each of its guarded
/// calls refused with [`Cause::WrongGuard`](crate::Cause::WrongGuard), before the call
/// reaches that guard.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not declare its system",
    label = "a guarded method that names no system calls its adapter's",
    note = "name the system this method calls, `#[circuit_breaker(system = \"…\", …)]` (or on its `#[adapter(system = \"…\", …)]` block), or once for the type: `#[guarded(system = \"…\")]` beside `#[derive(outbound_guard::Guarded)]` on `{Self}`"
)]
pub trait SystemAdapter: Guarded {
    /// The system's name, as in `resilience.toml`: `sber`.
    const SYSTEM: &'static str;

    /// The adapter, if it holds its own system's guard; otherwise an error naming both
    /// systems.
    ///
    /// ```
    /// use outbound_guard::{Guard, Guarded, Settings, SystemAdapter};
    ///
    /// #[derive(Guarded)]
    /// struct SberAdapter {
    ///     guard: Guard,
    /// }
    ///
    /// // What `#[guarded(system = "sber")]` on the derive writes.
    /// impl SystemAdapter for SberAdapter {
    ///     const SYSTEM: &'static str = "sber";
    /// }
    ///
    /// let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline").unwrap();
    /// let customer = Guard::new(settings.system("customer").unwrap());
    /// let err = SberAdapter { guard: customer }.wired().err().unwrap();
    /// assert!(err.to_string().contains("built with the `customer` guard"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`WrongGuard`] when the adapter holds another system's guard.
    fn wired(self) -> Result<Self, WrongGuard>
    where
        Self: Sized,
    {
        check::<Self>(self.guard())?;
        Ok(self)
    }
}

/// `guard` is the guard of `A`'s system; otherwise an error naming both systems.
pub(crate) fn check<A: SystemAdapter + ?Sized>(guard: &Guard) -> Result<(), WrongGuard> {
    if guard.system() == A::SYSTEM {
        Ok(())
    } else {
        Err(WrongGuard {
            adapter: std::any::type_name::<A>(),
            wanted: A::SYSTEM,
            held: guard.system().to_owned(),
        })
    }
}

/// An adapter was built with another system's guard: its calls would count against
/// that system's breaker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{adapter}` calls `{wanted}` but was built with the `{held}` guard: build it with `guards.get(\"{wanted}\")` (or `guards.adapter(…)`), so that `{wanted}` calls never count against the `{held}` breaker")]
pub struct WrongGuard {
    adapter: &'static str,
    wanted: &'static str,
    held: String,
}

impl WrongGuard {
    /// The system the adapter calls.
    pub fn wanted(&self) -> &str {
        self.wanted
    }

    /// The system of the guard it was given.
    pub fn held(&self) -> &str {
        &self.held
    }
}

/// Why [`Guards::adapter`](crate::Guards::adapter) could not build an adapter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WiringError {
    /// The settings have no table for the adapter's system.
    #[error(transparent)]
    UnknownSystem(#[from] crate::error::UnknownSystem),
    /// The adapter was built with another system's guard.
    #[error(transparent)]
    WrongGuard(#[from] WrongGuard),
}
