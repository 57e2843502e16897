//! Writing the guarded method: the body, quoted once, as the call of one
//! `Guard::call_with` judged by the method's options, and the guard's refusal through
//! `error_map`. The tokens, and what each line is for, are shown once, in
//! `doc/expansion.md` (the `adapter` attribute's documentation includes it); the
//! snapshots in `tests/snapshots/` hold every case in full.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use crate::args::{Args, Errors};
use crate::lookup::{check_system, Loaded, Lookup};
use crate::validate::{self, Body, Method, Receiver};

/// The attribute: the guarded method, or the errors next to the untouched method so
/// that one mistake does not cascade into unrelated ones.
pub(crate) fn circuit_breaker(
    args: TokenStream,
    item: TokenStream,
    lookup: &dyn Lookup,
) -> TokenStream {
    match expand(args, item.clone(), lookup) {
        Ok(tokens) => tokens,
        Err(error) => {
            let mut tokens = error.to_compile_error();
            tokens.extend(item);
            tokens
        }
    }
}

fn expand(args: TokenStream, item: TokenStream, lookup: &dyn Lookup) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let args = Args::parse(args, true).map_err(|e| errors.push(e)).ok();
    let method = validate::method(item).map_err(|e| errors.push(e)).ok();
    let track = match args.as_ref().and_then(|args| args.system.as_ref()) {
        Some(system) => settings(system, lookup, "`#[circuit_breaker]`")
            .map_err(|e| errors.push(e))
            .ok(),
        None => None,
    };
    errors.finish()?;
    match (args, method, track) {
        (Some(args), Some(method), Some(track)) => Ok(generate(
            &args,
            &method,
            &Context {
                track: track.as_ref(),
                block: None,
            },
        )),
        _ => unreachable!("every failure above was recorded as an error"),
    }
}

/// Checks `system` against the settings file: an error on the literal if the file is
/// missing or wrong, or has no such system. Otherwise the item that makes cargo rebuild
/// the crate when an input of the check changes, unless the crate's build script tracks
/// them (`outbound_guard_settings::build::track`).
pub(crate) fn settings(
    system: &syn::LitStr,
    lookup: &dyn Lookup,
    who: &str,
) -> syn::Result<Option<TokenStream>> {
    let who = format!(
        "`{}`, named by {who}, is checked against it",
        system.value()
    );
    let loaded = lookup
        .load(&who)
        .map_err(|message| syn::Error::new(system.span(), message))?;
    check_system(system, &loaded)?;
    Ok(lookup.track(&loaded.path).then(|| tracking(&loaded)))
}

/// `const _` of the settings file's and the crate's `Cargo.toml`'s bytes: stable Rust's
/// one way for a macro to make cargo track a file (rustc lists an included file in its
/// dep-info). `Cargo.toml` holds `[package.metadata.outbound-guard] settings`, which
/// says which file is read.
fn tracking(loaded: &Loaded) -> TokenStream {
    let Loaded { path, manifest, .. } = loaded;
    quote! {
        const _: (&[u8], &[u8]) = (::core::include_bytes!(#path), ::core::include_bytes!(#manifest));
    }
}

/// Where a method is written.
pub(crate) struct Context<'a> {
    /// The item that makes cargo track the settings file, if this method carries it.
    pub track: Option<&'a TokenStream>,
    /// The `#[adapter]` block the method is in, if any.
    pub block: Option<&'a Block>,
}

/// What an `#[adapter]` block gives each of its methods.
pub(crate) struct Block {
    /// The block's self type's span: every method reaches the guard through a call
    /// spanned there, so a missing `#[derive(Guarded)]` is one error, not one per method.
    pub self_span: proc_macro2::Span,
    /// For a generic block, the check that its system is the type's, evaluated when the
    /// method is instantiated (a `const _` item cannot name the block's parameters).
    pub check: Option<TokenStream>,
}

pub(crate) fn generate(args: &Args, method: &Method, context: &Context) -> TokenStream {
    let Args {
        system,
        error_map,
        failure_if,
        retry_after,
        slow_as_error,
        krate,
    } = args;
    let syn::ItemFn {
        attrs, vis, sig, ..
    } = &method.item;
    let ret = &method.ret;

    // Spanned on the receiver, or on the block's self type: a missing `#[derive(Guarded)]`
    // is reported there, once for a whole block.
    let receiver = context.block.map_or_else(
        || {
            sig.inputs
                .first()
                .map_or_else(proc_macro2::Span::call_site, Spanned::span)
        },
        |block| block.self_span,
    );
    // The system named on the attribute, or the type's, which its derive declares
    // (spanned on the block's self type: a type that declares none is one error there).
    let system = if let Some(system) = system {
        system.to_token_stream()
    } else {
        quote_spanned!(receiver=> <Self as #krate::SystemAdapter>::SYSTEM)
    };
    let guard = match method.receiver {
        Receiver::Shared => quote_spanned!(receiver=> #krate::__private::guard(self, #system)),
        Receiver::Exclusive { by_deref: true } => {
            quote_spanned!(receiver=> ::core::clone::Clone::clone(#krate::__private::guard(&*self, #system)))
        }
        Receiver::Exclusive { by_deref: false } => {
            quote_spanned!(receiver=> ::core::clone::Clone::clone(#krate::__private::guard(&self, #system)))
        }
    };
    let mut judge = TokenStream::new();
    if let Some(failure_if) = failure_if {
        // Spanned on the user's path: a wrong signature is reported there.
        judge.extend(quote_spanned!(failure_if.span()=> .failure_if(#failure_if)));
    }
    if let Some(retry_after) = retry_after {
        judge.extend(quote_spanned!(retry_after.span()=> .retry_after(#retry_after)));
    }
    if *slow_as_error {
        judge.extend(quote!(.slow_as_error()));
    }
    // Spanned on the user's path: a wrong signature, or a function returning another
    // error type, is one type error there that names the signature needed.
    let map = quote_spanned!(error_map.span()=> #krate::__private::error_map::<#ret>(#error_map));
    let block = match &method.body {
        Body::Native(block) | Body::AsyncTrait(block) | Body::ImplFuture(block) => block,
    };
    let pin_return = quote_spanned! {ret.span()=>
        if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<#ret> {
            return __cb_ret;
        }
    };
    // A body of one expression keeps its braces: it stays a block of its own.
    let call = quote! {
        let __cb_guard = #guard;
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = __cb_guard
            .call_with(#krate::__private::options::<#ret>() #judge, async move {
                #pin_return
                #block
            })
            .await;
        #krate::__private::flatten(__cb_judged, #map)
    };
    let track = context.track;
    // What comes before the call: the file's tracking, a generic block's system check.
    let check = context.block.and_then(|block| block.check.as_ref());
    // A method of an `#[adapter]` block is recorded once, by the block.
    let calls = match (context.block, &args.system) {
        (None, Some(system)) => {
            let by = format!("`#[circuit_breaker]` on `{}`", sig.ident);
            Some(crate::calls::called(krate, system, &by))
        }
        _ => None,
    };
    let first = quote!(#track #check #calls);
    let body = match &method.body {
        Body::Native(_) => quote! {
            #first
            #call
        },
        Body::ImplFuture(_) => quote! {
            #first
            async move {
                #pin_return
                #call
            }
        },
        Body::AsyncTrait(_) => quote! {
            #first
            ::std::boxed::Box::pin(async move {
                #pin_return
                #call
            })
        },
    };
    let mut out = TokenStream::new();
    for attr in attrs {
        attr.to_tokens(&mut out);
    }
    quote!(#out #vis #sig { #body })
}

#[cfg(test)]
mod tests;
