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
/// timeout and slow-call check. See the `resilience` crate for the whole story.
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::circuit_breaker(args.into(), item.into(), &lookup::ManifestDir).into()
}

/// Implements `resilience::Guarded` for an adapter: the field of type
/// `resilience::Guard` (or the one marked `#[guard]`) is its guard.
#[proc_macro_derive(Guarded, attributes(guard, resilience))]
pub fn derive_guarded(item: TokenStream) -> TokenStream {
    derive::guarded(item.into()).into()
}
