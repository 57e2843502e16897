//! The link-time record of a system this crate calls: one entry in the runtime's
//! `__private::CALLED_SYSTEMS` per expansion that names a system, so that a settings file
//! mounted at run time is checked for every system any crate of the binary calls.
//!
//! The tokens depend on the system and the runtime's path only: expansions stay pure.

use proc_macro2::TokenStream;
use quote::quote;

/// `const _: () = { CALLED_SYSTEMS! { static …: Called = Called { system: "sber", by }; } };`:
/// an entry of the runtime's distributed slice; `by` is what declared it, for the mounted
/// file's error.
///
/// The entry goes through the `macro_rules!` that linkme's `#[distributed_slice]` declares
/// beside the slice (and that linkme's element attribute expands to), not through that
/// attribute: the attribute is a second procedural macro per entry and adds a
/// type-checking function of closures to each, which together cost about 0.12 s of CPU
/// per 100 entries (measured with `benches/compile_cost.sh`'s crate); the slice's
/// element type is written here, `Called`, so the check has nothing to catch. The
/// workspace's tests read back card-form entries made in another crate of the binary,
/// and the lints test compiles them under `#![deny(unsafe_code)]`.
pub(crate) fn called(krate: &TokenStream, system: &syn::LitStr, by: &str) -> TokenStream {
    // What `cargo expand` shows above the record, where a reviewer meets its
    // `#[unsafe(link_section = …)]`.
    let doc = format!(
        " This binary calls `{}`: a settings file mounted at run time must hold it. \
         linkme's slice macro puts this entry in a link section of its own (`#[used]` \
         keeps it), which the runtime reads as one slice, `CALLED_SYSTEMS`, of `Called`s.",
        system.value()
    );
    quote! {
        const _: () = {
            #krate::__private::CALLED_SYSTEMS! {
                #![linkme_macro = #krate::__private::CALLED_SYSTEMS]
                #[doc = #doc]
                static __CB_CALLS: #krate::__private::Called = #krate::__private::Called {
                    system: #system,
                    by: #by,
                };
            }
        };
    }
}
