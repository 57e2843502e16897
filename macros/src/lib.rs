//! The `#[adapter]` and `#[circuit_breaker]` attributes and `#[derive(Guarded)]` of
//! [`outbound-guard`](https://docs.rs/outbound-guard). Use them through that crate, which
//! re-exports them and provides the runtime they expand against.
//!
//! - [`macro@adapter`] on an out-adapter's `impl` block guards every async method of the
//!   block; the usual way.
//! - [`macro@circuit_breaker`] guards one method.
//! - [`derive@Guarded`] names the adapter's guard field and, with
//!   `#[guarded(system = "…")]`, declares the adapter's system once.
//!
//! Every expansion is a pure function of its tokens and the settings file it reads: no
//! state is kept from one expansion to the next, so an IDE may expand them in any order,
//! again, or from a cache. The stages each have a module: `args` parses the attribute,
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
mod validate;

use proc_macro::TokenStream;

/// Guards one out-adapter's async method with its system's bulkhead, breaker, total
/// timeout and slow-call check (R-RES-CB-1…6). [`macro@adapter`] on the `impl` block does
/// this for every method of the block; its documentation shows the expansion and the
/// compile errors.
///
/// ```ignore
/// #[derive(outbound_guard::Guarded)]
/// #[guarded(system = "sber")]
/// pub struct SberAdapter { guard: outbound_guard::Guard, http: reqwest::Client }
///
/// impl PaymentPort for SberAdapter {
///     #[outbound_guard::circuit_breaker(error_map = PaymentPortError::system_unavailable)]
///     async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
///         /* the call, with `?` and `return` as usual */
///     }
/// }
/// ```
///
/// Arguments (the system is not one: it is the type's, declared once on its derive,
/// `#[guarded(system = "sber")]`, and checked there against the crate's settings file,
/// `resilience.toml` next to its `Cargo.toml` unless `[package.metadata.outbound-guard]
/// settings = "…"` names another, else the workspace root's):
///
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
/// `Guarded` with its system. It expands to one `Guard::call_with` with the method's options (the steps
/// of a guarded call: [`GuardedCall`](https://docs.rs/outbound-guard/latest/outbound_guard/struct.GuardedCall.html));
/// the guard's refusals go through `error_map`.
///
/// Editing the settings file, or `Cargo.toml`'s `[package.metadata.outbound-guard]
/// settings`, rebuilds the crate: the type's derive carries an `include_bytes!` of each
/// for cargo to track. To keep it out of `cargo expand`, track the file from
/// the crate's build script instead (`outbound-guard-settings` under
/// `[build-dependencies]`):
///
/// ```ignore
/// // build.rs
/// fn main() {
///     outbound_guard_settings::build::track();
/// }
/// ```
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::circuit_breaker(args.into(), item.into()).into()
}

/// Guards every async method of an out-adapter's `impl` block (a trait impl or an
/// inherent one) with its system's bulkhead, breaker, total timeout and slow-call check,
/// as `#[circuit_breaker]` on each method would (R-RES-CB-1).
///
/// ```ignore
/// #[derive(outbound_guard::Guarded)]
/// #[guarded(system = "sber")]
/// pub struct SberAdapter { guard: outbound_guard::Guard, http: reqwest::Client }
///
/// #[outbound_guard::adapter(
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
/// `#[circuit_breaker(…)]` may give `error_map`, `failure_if` or `slow_as_error` to
/// change them for that method. Every `async fn` of the block is guarded (also a `fn`
/// returning `impl Future` from one `async move` block, and a method `#[async_trait]`
/// has rewritten, whichever of the two attributes comes first). A method of a trait
/// impl, or a `pub` method of an inherent block, that is neither guarded nor marked
/// `#[unguarded(reason = "…")]` is a compile error: a method added later cannot skip the
/// breaker unnoticed.
///
/// # The adapter's system
///
/// The system is declared once, on the type's derive:
/// `#[derive(Guarded)] #[guarded(system = "sber")]`, which checks it against
/// `resilience.toml` and implements `outbound_guard::SystemAdapter`, so an adapter built
/// with another system's guard is refused where it is built (`Guards::adapter`,
/// `SystemAdapter::wired`). Blocks and methods name no system: each guarded method
/// calls its type's, `<Self as SystemAdapter>::SYSTEM`, resolved by the compiler (a
/// macro sees only its own input, so a block cannot read the derive's attribute; the
/// trait carries the name from one to the other). `system = …` on the attribute is an
/// error that says to move it onto the derive. A type may have any number of blocks
/// (one per port, or split by concern), in any order. A block on a type whose derive
/// declares no system is one error per block saying to add `#[guarded(system = "…")]`.
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
/// #[guarded(system = "sber")]
/// pub struct SberAdapter { guard: resilience::Guard }
///
/// #[resilience::adapter(error_map = PortError::unavailable, crate = ::resilience)]
/// impl SberAdapter { /* … */ }
/// ```
///
#[doc = include_str!("../doc/expansion.md")]
///
#[doc = include_str!("../doc/compile-errors.md")]
#[proc_macro_attribute]
pub fn adapter(args: TokenStream, item: TokenStream) -> TokenStream {
    adapter::adapter(args.into(), item.into()).into()
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
/// checked against the settings file and implements `outbound_guard::SystemAdapter`. An
/// adapter with guarded methods (`#[adapter]` blocks, `#[circuit_breaker]` methods) must
/// declare it; every such method calls this system.
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
