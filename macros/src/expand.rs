//! Writing the guarded method: the body, quoted once, as the call of one
//! `Guard::call_judged` judged by the method's options, and the guard's refusal through
//! `error_map`. The tokens, and what each line is for, are shown once, in
//! `doc/expansion.md` (the `adapter` attribute's documentation includes it); the
//! snapshots in `tests/snapshots/` hold every case in full.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::LitStr;

use crate::args::{Args, Errors};
use crate::lookup::Lookup;
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
    if let Some(by) = guarded_by(&item) {
        return Err(twice(by));
    }
    let mut errors = Errors::default();
    let args = Args::parse(args).map_err(|e| errors.push(e)).ok();
    let method = validate::method(item).map_err(|e| errors.push(e)).ok();
    // A system named here is checked against the settings file here, on its literal.
    let declared = match &args {
        Some(args) => {
            let name = method.as_ref().map(|m| &m.item.sig.ident);
            declared(args, name, lookup).map_err(|e| errors.push(e))
        }
        None => Ok(TokenStream::new()),
    };
    errors.finish()?;
    match (args, method, declared) {
        (Some(args), Some(method), Ok(declared)) => Ok(generate(&args, &method, &declared, None)),
        _ => unreachable!("every failure above was recorded as an error"),
    }
}

/// Who guarded a method already: an attribute's expansion binds its guard to
/// [`METHOD_MARK`], a block's to [`BLOCK_MARK`], and an attribute expanded after either
/// finds it in its input. By that mark, not by the attribute's name, which a `use … as …`
/// alias changes and a macro cannot resolve.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GuardedBy {
    /// A `#[circuit_breaker]` (under any name) expanded before this one.
    Method,
    /// The method's `#[adapter]` block.
    Block,
}

/// The name a method-level expansion binds its guard to: the mark of a guarded method.
pub(crate) const METHOD_MARK: &str = "__cb_guard";
/// The name a block's expansion binds each method's guard to.
pub(crate) const BLOCK_MARK: &str = "__cb_block_guard";

/// Who guarded the item already, if anyone did (see [`GuardedBy`]). The tokens are read
/// as one string, which the compiler hands over at once: walking them token by token
/// would cross from the macro to the compiler for each one, on every method.
pub(crate) fn guarded_by(tokens: &TokenStream) -> Option<GuardedBy> {
    let text = tokens.to_string();
    let bound = |mark: &str| text.contains(&format!("let {mark} ="));
    if bound(BLOCK_MARK) {
        Some(GuardedBy::Block)
    } else if bound(METHOD_MARK) {
        Some(GuardedBy::Method)
    } else {
        None
    }
}

/// The one error of a `#[circuit_breaker]` on a method guarded already, on this
/// attribute: a method guarded twice takes two permits and counts twice on each call.
fn twice(by: GuardedBy) -> syn::Error {
    let message = match by {
        GuardedBy::Method => "this method is already guarded by the `#[circuit_breaker]` above: guarded twice, each call would take two bulkhead permits and count twice against the breaker; remove this attribute (merge its arguments into the other)",
        GuardedBy::Block => "this method is already guarded by its `#[outbound_guard::adapter]` block: guarded twice, each call would take two bulkhead permits and count twice against the breaker; to change the block's arguments for this method, write the attribute as `#[circuit_breaker(…)]` (the block finds it by that name, not through a `use … as …` alias), or remove it",
    };
    syn::Error::new(Span::call_site(), message)
}

/// What a method's own `system = "…"` brings into its body (see
/// [`declared_at`](crate::system::declared_at)); nothing when it names none.
pub(crate) fn declared(
    args: &Args,
    method: Option<&syn::Ident>,
    lookup: &dyn Lookup,
) -> syn::Result<TokenStream> {
    let Some(system) = &args.system else {
        return Ok(TokenStream::new());
    };
    let on = method
        .map(|name| format!(" on `{name}`"))
        .unwrap_or_default();
    let by = format!("`#[circuit_breaker(system = {:?})]`{on}", system.value());
    crate::system::declared_at(system, &args.krate, lookup, "`#[circuit_breaker]`", &by)
}

/// The guarded method. `declared` comes first in its body (the settings file's tracking
/// and the link-time record of a system named on the method). `block`: the span of the
/// self type of the `#[adapter]` block the method is in, if any. A method that names no
/// system reaches its type's through a call spanned there (or on its receiver), so a
/// type that declares none is one error, not one per method; one that names a system
/// reaches it through a call spanned on the literal (which a block's methods share).
pub(crate) fn generate(
    args: &Args,
    method: &Method,
    declared: &TokenStream,
    block: Option<Span>,
) -> TokenStream {
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

    // Where an error about reaching the guard points: the receiver, or the block's self
    // type (once for the block). `self` keeps the receiver's own resolution, so that it
    // is the method's also where a `macro_rules!` wrote the type's name.
    let self_token = match sig.inputs.first() {
        Some(syn::FnArg::Receiver(receiver)) => receiver.self_token.span,
        _ => Span::call_site(),
    };
    let receiver = block.unwrap_or(self_token);
    // A method that names its system reaches the guard through a call spanned on the
    // literal, its argument `self` too: the literal is what an error there points at.
    let at = system.as_ref().map_or(receiver, LitStr::span);
    let this = Ident::new("self", self_token.located_at(at));
    // The system the call is for: the literal, or the type's declared system.
    let (reach, system) = match system {
        Some(system) => (
            crate::system::guard_of(krate, system),
            system.to_token_stream(),
        ),
        None => (
            quote_spanned!(receiver=> #krate::__private::declared),
            quote_spanned!(receiver=> <Self as #krate::SystemAdapter>::SYSTEM),
        ),
    };
    let (mark, guard, lent) = lend(&reach, &this, method.receiver, at, block.is_some());
    let judge = judge(failure_if.as_ref(), retry_after.as_ref(), *slow_as_error);
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
        let #mark = #guard;
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = #krate::__private::call(
            #lent,
            #system,
            #krate::__private::options::<#ret>() #judge,
            async move {
                #pin_return
                #block
            },
        )
        .await;
        #krate::__private::flatten(__cb_judged, #map)
    };
    let body = wrap(&method.body, declared, &pin_return, &call);
    let mut out = TokenStream::new();
    for attr in attrs {
        attr.to_tokens(&mut out);
    }
    quote!(#out #vis #sig { #body })
}

/// The method's new body: the guarded `call`, after what the method's literal brings
/// (`declared`), as the method's kind of body returns it (awaited in an `async fn`, in an
/// `async move` block for `impl Future`, boxed as `#[async_trait]` left it).
fn wrap(
    body: &Body,
    declared: &TokenStream,
    pin_return: &TokenStream,
    call: &TokenStream,
) -> TokenStream {
    match body {
        Body::Native(_) => quote! {
            #declared
            #call
        },
        Body::ImplFuture(_) => quote! {
            #declared
            async move {
                #pin_return
                #call
            }
        },
        Body::AsyncTrait(_) => quote! {
            #declared
            ::std::boxed::Box::pin(async move {
                #pin_return
                #call
            })
        },
    }
}

/// The options' builder calls after `options::<Ret>()`, each spanned on the user's
/// path: a wrong signature is reported there.
fn judge(
    failure_if: Option<&syn::Expr>,
    retry_after: Option<&syn::Expr>,
    slow: bool,
) -> TokenStream {
    let mut judge = TokenStream::new();
    if let Some(failure_if) = failure_if {
        judge.extend(quote_spanned!(failure_if.span()=> .failure_if(#failure_if)));
    }
    if let Some(retry_after) = retry_after {
        judge.extend(quote_spanned!(retry_after.span()=> .retry_after(#retry_after)));
    }
    if slow {
        judge.extend(quote!(.slow_as_error()));
    }
    judge
}

/// The guard's binding (the mark of a guarded method, see [`guarded_by`]), the call that
/// reaches the guard (`reach(this)`, spanned `at`, whole, where its errors point), and
/// what the call is given: `&self` lends the guard; another receiver gives `self` to the
/// body, so the guard is cloned first.
fn lend(
    reach: &TokenStream,
    this: &Ident,
    receiver: Receiver,
    at: Span,
    in_block: bool,
) -> (Ident, TokenStream, TokenStream) {
    let mark = Ident::new(
        if in_block { BLOCK_MARK } else { METHOD_MARK },
        Span::call_site(),
    );
    let (guard, lent) = match receiver {
        Receiver::Shared => (quote_spanned!(at=> #reach(#this)), quote!(#mark)),
        Receiver::Exclusive { by_deref: true } => {
            let reached = quote_spanned!(at=> #reach(&*#this));
            (
                quote!(::core::clone::Clone::clone(#reached)),
                quote!(&#mark),
            )
        }
        Receiver::Exclusive { by_deref: false } => {
            let reached = quote_spanned!(at=> #reach(&#this));
            (
                quote!(::core::clone::Clone::clone(#reached)),
                quote!(&#mark),
            )
        }
    };
    (mark, guard, lent)
}

#[cfg(test)]
mod tests;
