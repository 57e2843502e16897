//! The `#[adapter]` and `#[circuit_breaker]` attributes and `#[derive(Guarded)]` of
//! [`outbound-guard`](https://docs.rs/outbound-guard). Use them through that crate, which
//! re-exports them and provides the runtime they expand against.
//!
//! - [`macro@circuit_breaker`] guards one method, as the guide's design card writes it:
//!   `#[circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]`.
//! - [`macro@adapter`] on an out-adapter's `impl` block guards every async method of the
//!   block: the way to say it once for a whole block.
//! - [`derive@Guarded`] names the adapter's guard field and, with
//!   `#[guarded(system = "…")]`, may declare the adapter's system once for the type.
//!
//! Every expansion is a pure function of its tokens and the settings file it reads: no
//! state is kept from one expansion to the next, so an IDE may expand them in any order,
//! again, or from a cache. The stages each have a module: `args` parses the attribute,
//! `system` reads a `system = "…"` literal and ties the levels that name it together,
//! `lookup` finds and checks the system's entry in `resilience.toml`, `validate`
//! checks the method, `expand` writes the guarded method; `adapter` applies them to
//! every method of an `impl` block; `derive` writes the derive.

#![forbid(unsafe_code)]

mod adapter;
mod args;
mod calls;
mod derive;
mod expand;
mod lookup;
mod system;
mod validate;

use proc_macro::TokenStream;

/// Guards one out-adapter's async method with its system's bulkhead, breaker, total
/// timeout and slow-call check (R-RES-CB-1…6), as the guide's design card writes it:
///
/// ```ignore
/// #[derive(outbound_guard::Guarded)]
/// pub struct SberAdapter { guard: outbound_guard::Guard, http: reqwest::Client }
///
/// impl PaymentPort for SberAdapter {
///     #[outbound_guard::circuit_breaker(system = "sber", error_map = PaymentPortError::system_unavailable)]
///     async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
///         /* the call, with `?` and `return` as usual */
///     }
/// }
/// ```
///
/// [`macro@adapter`] on the `impl` block does this for every method of the block; its
/// documentation shows the expansion and the compile errors. Arguments:
///
/// - `system = "sber"`: the system the method calls, checked at compile time against the
///   crate's settings file (`resilience.toml` next to its `Cargo.toml` unless
///   `[package.metadata.outbound-guard] settings = "…"` names another, else the workspace
///   root's), with a "did you mean" on the literal. It may be left out where the type's
///   derive declares it (`#[guarded(system = "sber")]`) or, inside an `#[adapter]` block,
///   where the block names it; where it is named at more than one level, the levels must
///   agree (one compile error on the literal otherwise).
/// - `error_map = path` (required): `fn(outbound_guard::CircuitBreakerError) -> PortError`;
///   the guard's refusals, timeouts and (with `slow_as_error`) slow calls come back
///   through it, so no raw breaker error leaves the adapter (R-RES-CB-6).
/// - `failure_if = path`: `fn(&PortError) -> bool`, which errors count against the
///   breaker (default: every `Err`); the others count as successes.
/// - `retry_after = path`: `fn(&PortError) -> Option<Duration>`, the upstream's retry
///   hint a counted error carries (`Retry-After` of a 429 or 503, gRPC's
///   `grpc-retry-pushback-ms`): an opening it starts or joins lasts at least that long,
///   capped by `cb_open_max`.
/// - `slow_as_error`: a call slower than `cb_slow_threshold` returns `Cause::Slow`
///   instead of its value (it counts as a failure either way).
/// - `crate = path`: the runtime's path, if the dependency is renamed (see
///   [`macro@adapter`], "A renamed dependency").
///
/// The method must be an `async fn` with a body and a `self` receiver returning a
/// `Result` (or a `fn` returning `impl Future<Output = Result<…>>` from an `async`
/// block, or one already rewritten by `#[async_trait]`), in a type that derives
/// `Guarded` (with or without a system). It expands to one guarded call with the
/// method's options (the steps of a guarded call:
/// [`GuardedCall`](https://docs.rs/outbound-guard/latest/outbound_guard/struct.GuardedCall.html));
/// the guard's refusals go through `error_map`. A call whose adapter holds another
/// system's guard (an adapter built from a struct literal with the wrong one) is refused
/// with `Cause::WrongGuard`, naming both systems, before it reaches that guard.
///
/// Editing the settings file, or `Cargo.toml`'s `[package.metadata.outbound-guard]
/// settings`, rebuilds the crate: each expansion that checks a system against the file
/// carries an `include_bytes!` of each for cargo to track. To keep it out of
/// `cargo expand`, track the file from the crate's build script instead
/// (`outbound-guard-settings` under `[build-dependencies]`):
///
/// ```ignore
/// // build.rs
/// fn main() {
///     outbound_guard_settings::build::track();
/// }
/// ```
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::circuit_breaker(args.into(), item.into(), &lookup::ManifestDir).into()
}

/// Guards every async method of an out-adapter's `impl` block (a trait impl or an
/// inherent one) with its system's bulkhead, breaker, total timeout and slow-call check,
/// as `#[circuit_breaker]` on each method would (R-RES-CB-1).
///
/// ```ignore
/// #[derive(outbound_guard::Guarded)]
/// pub struct SberAdapter { guard: outbound_guard::Guard, http: reqwest::Client }
///
/// #[outbound_guard::adapter(
///     system = "sber",
///     error_map = PaymentPortError::system_unavailable,
///     failure_if = PaymentPortError::is_outage,
/// )]
/// impl PaymentPort for SberAdapter {
///     async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> { /* … */ }
///
///     // Refines the block's arguments for this method.
///     #[circuit_breaker(slow_as_error)]
///     async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> { /* … */ }
///
///     // Opts out, with a reason a reviewer can check.
///     #[unguarded(reason = "reads the adapter's own cache, no I/O")]
///     fn last_payment(&self) -> Option<PaymentRef> { /* … */ }
/// }
/// ```
///
/// The arguments are those of [`macro@circuit_breaker`]. A method's own
/// `#[circuit_breaker(…)]` may give `error_map`, `failure_if`, `retry_after` or
/// `slow_as_error` to change them for that method (and repeat the block's `system`). Every `async fn` of the block is guarded (also a `fn`
/// returning `impl Future` from one `async move` block, and a method `#[async_trait]`
/// has rewritten, whichever of the two attributes comes first). A method of a trait
/// impl, or a `pub` method of an inherent block, that is neither guarded nor marked
/// `#[unguarded(reason = "…")]` is a compile error: a method added later cannot skip the
/// breaker unnoticed. An associated function without `self` (a constructor such as
/// `pub fn new(guard: Guard) -> Result<Self, …>`) cannot reach the guard and is left as
/// it is; an `async fn` without `self` is an error. A method or block is guarded once: a
/// second `#[circuit_breaker]` on a method or `#[adapter]` on a block, under any name,
/// is one error on the second (write a refinement inside a block as
/// `#[circuit_breaker(…)]`, by that name).
///
/// # The adapter's system
///
/// Say it where you like, once or more; where it is said more than once, the places
/// must agree:
///
/// - on the method, `#[circuit_breaker(system = "sber", …)]` (the design card's form),
///   checked against `resilience.toml` there;
/// - on the block, `#[adapter(system = "sber", …)]`, checked there, for every method of
///   the block; a method of the block that names another system is an error on its
///   literal;
/// - on the type, `#[derive(Guarded)] #[guarded(system = "sber")]`, checked there, for
///   every method and block of the type that names none; it also implements
///   `outbound_guard::SystemAdapter`, so an adapter built with another system's guard is
///   refused where it is built (`Guards::adapter`, `SystemAdapter::wired`). A method or
///   block of the type that names another system is a type error on its literal
///   (`` `SberAdapter` is not an adapter of this system ``): a macro sees only its
///   own input, so the derive and the methods meet through a trait the derive
///   implements, which the compiler checks.
///
/// A method with no system on itself, its block or its type's derive is one error,
/// `` `SberAdapter` does not declare its system ``. A type may have any number of blocks
/// (one per port, or split by concern), in any order. Whichever way the adapter was
/// built, a call whose adapter holds another system's guard is refused with
/// `Cause::WrongGuard` before it reaches that guard, so it never counts against another
/// system's breaker.
///
/// # A renamed dependency
///
/// When `outbound-guard` is a dependency under another name
/// (`resilience = { package = "outbound-guard", … }`), say so on every attribute with
/// `crate = path` and on the derive with `#[outbound_guard(crate = path)]`, as serde does:
///
/// ```ignore
/// #[derive(resilience::Guarded)]
/// #[outbound_guard(crate = ::resilience)]
/// pub struct SberAdapter { guard: resilience::Guard }
///
/// #[resilience::adapter(system = "sber", error_map = PortError::unavailable, crate = ::resilience)]
/// impl SberAdapter { /* … */ }
/// ```
///
#[doc = include_str!("../doc/expansion.md")]
///
#[doc = include_str!("../doc/compile-errors.md")]
#[proc_macro_attribute]
pub fn adapter(args: TokenStream, item: TokenStream) -> TokenStream {
    adapter::adapter(args.into(), item.into(), &lookup::ManifestDir).into()
}

/// Marks a method of an `#[outbound_guard::adapter]` block that does not go through the
/// guard, with the reason: `#[unguarded(reason = "local cache, no I/O")]`. Only
/// meaningful inside such a block, which removes it.
#[proc_macro_attribute]
pub fn unguarded(_args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let error = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[unguarded]` marks a method of an `#[outbound_guard::adapter]` impl block that skips the guard; outside such a block there is nothing to opt out of: remove it",
    )
    .to_compile_error();
    quote::quote!(#error #item).into()
}

/// Implements `outbound_guard::Guarded` for an adapter: the field of type
/// `outbound_guard::Guard` (or the one marked `#[guard]`) is its guard. Generic adapters
/// and tuple structs work; `#[outbound_guard(crate = path)]` names a renamed runtime
/// (see [`macro@adapter`], "A renamed dependency").
///
/// `#[guarded(system = "sber")]` declares the adapter's system, once for the type: it is
/// checked against the settings file and implements `outbound_guard::SystemAdapter`.
/// Its `#[adapter]` blocks and `#[circuit_breaker]` methods may then leave `system` out,
/// and those that name one must name this one. Without it, each guarded method (or its
/// block) names its system.
///
/// ```ignore
/// #[derive(outbound_guard::Guarded)]
/// #[guarded(system = "sber")]
/// pub struct SberAdapter {
///     guard: outbound_guard::Guard,
///     http: reqwest::Client,
/// }
/// ```
#[proc_macro_derive(Guarded, attributes(guard, guarded, outbound_guard))]
pub fn derive_guarded(item: TokenStream) -> TokenStream {
    derive::guarded(item.into(), &lookup::ManifestDir).into()
}

/// The settings file `#[circuit_breaker]` checks against, for `outbound_guard::settings!`:
/// `(::core::include_str!("/abs/path/resilience.toml"), "resilience.toml (compiled in)")`,
/// found by the same rule and named relative to the crate (no path of the build machine
/// in the binary); a compile error naming the files tried if there is none.
#[doc(hidden)]
#[proc_macro]
pub fn __settings_file(_: TokenStream) -> TokenStream {
    lookup::settings_file().into()
}
