//! Writing the guarded method: the body, quoted once, as the call of one
//! `Guard::call_with` judged by the method's options, and the guard's refusal through
//! `error_map`. The tokens, and what each line is for, are shown once, in
//! `doc/expansion.md` (the `adapter` attribute's documentation includes it); the
//! snapshots in `tests/snapshots/` hold every case in full.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use crate::args::{Args, Errors};
use crate::validate::{self, Body, Method, Receiver};

/// The attribute: the guarded method, or the errors next to the untouched method so
/// that one mistake does not cascade into unrelated ones.
pub(crate) fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    match expand(args, item.clone()) {
        Ok(tokens) => tokens,
        Err(error) => {
            let mut tokens = error.to_compile_error();
            tokens.extend(item);
            tokens
        }
    }
}

fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let args = Args::parse(args).map_err(|e| errors.push(e)).ok();
    let method = validate::method(item).map_err(|e| errors.push(e)).ok();
    errors.finish()?;
    match (args, method) {
        (Some(args), Some(method)) => Ok(generate(&args, &method, None)),
        _ => unreachable!("every failure above was recorded as an error"),
    }
}

/// `block`: the span of the self type of the `#[adapter]` block the method is in, if
/// any. Every method of a block reaches the guard through a call spanned there, so a
/// missing `#[derive(Guarded)]` or system is one error, not one per method.
pub(crate) fn generate(args: &Args, method: &Method, block: Option<Span>) -> TokenStream {
    let Args {
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
    let receiver = block.unwrap_or_else(|| {
        sig.inputs
            .first()
            .map_or_else(Span::call_site, Spanned::span)
    });
    // The guard of the type's system, which its derive declares (`SystemAdapter`): a
    // type that declares none is one error at `receiver`.
    let guard = match method.receiver {
        Receiver::Shared => quote_spanned!(receiver=> #krate::__private::guard(self)),
        Receiver::Exclusive { by_deref: true } => {
            quote_spanned!(receiver=> ::core::clone::Clone::clone(#krate::__private::guard(&*self)))
        }
        Receiver::Exclusive { by_deref: false } => {
            quote_spanned!(receiver=> ::core::clone::Clone::clone(#krate::__private::guard(&self)))
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
    let body = match &method.body {
        Body::Native(_) => call,
        Body::ImplFuture(_) => quote! {
            async move {
                #pin_return
                #call
            }
        },
        Body::AsyncTrait(_) => quote! {
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
