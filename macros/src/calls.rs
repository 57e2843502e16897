//! The link-time record of a system this crate calls: one entry in the runtime's
//! `__private::CALLED_SYSTEMS` per expansion that names a system, so that a settings file
//! mounted at run time is checked for every system any crate of the binary calls.
//!
//! The tokens depend on the system and the runtime's path only: expansions stay pure.

use proc_macro2::TokenStream;
use quote::quote;

/// `const _: () = { static …: Called = Called { system: "sber", by }; };` in the runtime's
/// distributed slice; `by` is what declared it, for the mounted file's error.
pub(crate) fn called(krate: &TokenStream, system: &syn::LitStr, by: &str) -> TokenStream {
    // What `cargo expand` shows above the record, where a reviewer meets its `unsafe`.
    let doc = format!(
        " This binary calls `{}`: a settings file mounted at run time must hold it. \
         linkme's `#[distributed_slice]` puts this entry in a link section of its own \
         (`#[used]` keeps it), which the runtime reads as one slice, `CALLED_SYSTEMS`. \
         The `unsafe` is linkme's and sound: `__typecheck` takes an uninhabited argument, \
         so it never runs; it only proves that this static has the slice's element type, \
         so every entry of the section is a `Called`.",
        system.value()
    );
    quote! {
        const _: () = {
            #[doc = #doc]
            #[#krate::__private::linkme::distributed_slice(#krate::__private::CALLED_SYSTEMS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __CB_CALLS: #krate::__private::Called = #krate::__private::Called {
                system: #system,
                by: #by,
            };
        };
    }
}
