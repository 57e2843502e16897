//! The link-time record of a system this crate calls: one entry in the runtime's
//! `__private::CALLED_SYSTEMS` per expansion that names a system, so that a settings file
//! mounted at run time is checked for every system any crate of the binary calls.
//!
//! The tokens depend on the system and the runtime's path only: expansions stay pure.

use proc_macro2::TokenStream;
use quote::quote;

/// `const _: () = { static …: &str = "sber"; };` in the runtime's distributed slice.
pub(crate) fn called(krate: &TokenStream, system: &syn::LitStr) -> TokenStream {
    quote! {
        const _: () = {
            #[#krate::__private::linkme::distributed_slice(#krate::__private::CALLED_SYSTEMS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __CB_CALLS: &::core::primitive::str = #system;
        };
    }
}
