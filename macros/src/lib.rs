//! The `#[circuit_breaker]` attribute and `#[derive(Guarded)]` of
//! [`resilience`](https://docs.rs/resilience). Use them through that crate, which
//! re-exports both and provides the runtime they expand against.
//!
//! The attribute runs in stages, each in its own module: `args` parses the attribute,
//! `lookup` finds and checks the system's entry in `resilience.toml`, `validate`
//! checks the method, `expand` writes the guarded method.

mod args;
mod derive;
mod expand;
mod lookup;
mod validate;

use proc_macro::TokenStream;

/// Guards an out-adapter's async method with its system's bulkhead, breaker, total
/// timeout and slow-call check (R-RES-CB-1…6).
///
/// ```ignore
/// #[derive(resilience::Guarded)]
/// pub struct SberAdapter { guard: resilience::Guard, http: reqwest::Client }
///
/// impl PaymentPort for SberAdapter {
///     #[resilience::circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
///     async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
///         /* the call, with `?` and `return` as usual */
///     }
/// }
/// ```
///
/// Arguments:
///
/// - `system = "sber"` (required): a string literal naming a `[systems.sber]` table of
///   the `resilience.toml` next to this crate's `Cargo.toml`, checked at compile time
///   (with a "did you mean" and the known systems when it is not there). `"default"` is
///   refused (R-RES-CB-X3).
/// - `error_map = path` (required): `fn(resilience::CircuitBreakerError) -> PortError`;
///   the guard's refusals, timeouts and (with `slow_as_error`) slow calls come back
///   through it, so no raw breaker error leaves the adapter (R-RES-CB-6).
/// - `failure_if = path`: `fn(&PortError) -> bool`, which errors count against the
///   breaker (default: every `Err`); the others count as successes.
/// - `slow_as_error`: a call slower than `cb_slow_threshold` returns `Cause::Slow`
///   instead of its value (it counts as a failure either way).
/// - `crate = path`: the runtime's path, if the dependency is renamed.
///
/// The method must be an `async fn` with a body and a `self` receiver returning a
/// `Result` (or a `fn` returning `impl Future<Output = Result<…>>` from an `async`
/// block, or one already rewritten by `#[async_trait]`), in a type that derives
/// `Guarded`. It expands to the guide's steps as calls into the runtime: bulkhead
/// permit, breaker permission, the body under the total timeout, elapsed check.
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::circuit_breaker(args.into(), item.into(), &lookup::ManifestDir).into()
}

/// Implements `resilience::Guarded` for an adapter: the field of type
/// `resilience::Guard` (or the one marked `#[guard]`) is its guard. Generic adapters
/// and tuple structs work; `#[resilience(crate = path)]` names a renamed runtime.
///
/// ```ignore
/// #[derive(resilience::Guarded)]
/// pub struct SberAdapter {
///     guard: resilience::Guard,
///     http: reqwest::Client,
/// }
/// ```
#[proc_macro_derive(Guarded, attributes(guard, resilience))]
pub fn derive_guarded(item: TokenStream) -> TokenStream {
    derive::guarded(item.into()).into()
}
