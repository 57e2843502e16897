//! `#[outbound_guard::adapter(…)]` on an `impl` block: every async method of the block is
//! guarded with the block's arguments, as if each carried `#[circuit_breaker(…)]`.
//!
//! Input:
//!
//! ```ignore
//! #[outbound_guard::adapter(system = "sber", error_map = PaymentPortError::system_unavailable)]
//! impl PaymentPort for SberAdapter {
//!     async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> { /* … */ }
//!     #[circuit_breaker(slow_as_error)]
//!     async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> { /* … */ }
//!     #[unguarded(reason = "reads a local cache, no I/O")]
//!     fn cached(&self) -> Option<PaymentRef> { /* … */ }
//! }
//! ```
//!
//! Output: the block, each guarded method expanded as `#[circuit_breaker]` expands it
//! (`confirm` with `slow_as_error` added), the markers removed, and a compile-time check
//! that the block's system is the one the type's derive declares
//! (`#[guarded(system = "sber")]`, which writes the type's one `impl SystemAdapter`):
//!
//! ```ignore
//! const _: () = ::outbound_guard::__private::same_system::<SberAdapter>("sber", "SberAdapter");
//! impl PaymentPort for SberAdapter { /* the guarded methods */ }
//! ```
//!
//! The check is the same for every block of a type, so a type may have any number of
//! blocks, expanded in any order. A generic block's check sits in each guarded method
//! as an inline `const { … }` (a `const` item cannot name the block's parameters),
//! evaluated where the method is instantiated.
//!
//! A method of a trait impl, or a `pub` method of an inherent block, that is neither
//! guarded nor marked `#[unguarded(reason = "…")]` is an error (R-RES-CB-1): a method
//! added later cannot silently skip the breaker.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Attribute, ImplItem, ImplItemFn, ItemImpl, LitStr, Meta, ReturnType, Type, Visibility};

use crate::args::{Args, Errors};
use crate::expand::{generate, settings, Block, Context};
use crate::lookup::Lookup;
use crate::validate;

/// The attribute: the block with every method guarded, or the errors next to the block
/// with the markers removed (so that one mistake does not cascade).
pub(crate) fn adapter(args: TokenStream, item: TokenStream, lookup: &dyn Lookup) -> TokenStream {
    let Ok(mut block) = syn::parse2::<ItemImpl>(item.clone()) else {
        let mut tokens = syn::Error::new(
            item.clone()
                .into_iter()
                .next()
                .map_or_else(proc_macro2::Span::call_site, |t| t.span()),
            "`#[outbound_guard::adapter]` goes on the `impl` block of an out-adapter, such as `impl PaymentPort for SberAdapter { … }`; on a single method, use `#[circuit_breaker]`",
        )
        .to_compile_error();
        tokens.extend(item);
        return tokens;
    };
    let mut errors = Errors::default();
    let args = Args::parse(args, false).map_err(|e| errors.push(e)).ok();
    // A system named here is checked against the settings file here; a block that takes
    // its type's system has it checked on the derive, where it is written.
    let track = match &args {
        Some(Args {
            system: Some(system),
            ..
        }) => settings(system, lookup, "this `#[outbound_guard::adapter]` block")
            .map_err(|e| errors.push(e))
            .ok(),
        Some(_) => Some(None),
        None => None,
    };
    let generic = !block.generics.params.is_empty();
    let self_ty = &block.self_ty;
    let name = type_name(self_ty);
    // The block's system is the type's: checked by one `const` beside a plain block; in
    // a generic block, whose parameters a `const` item cannot name, by an inline `const`
    // in each guarded method, evaluated where the method is instantiated.
    let check = |ty: &TokenStream| {
        args.as_ref().and_then(|args| {
            let Args { system, krate, .. } = args;
            let system = system.as_ref()?;
            let check = quote!(#krate::__private::same_system::<#ty>(#system, #name));
            Some(located_at(check, system.span()))
        })
    };
    let context = Block {
        self_span: self_ty.span(),
        check: generic
            .then(|| check(&quote!(Self)))
            .flatten()
            .map(|check| quote!(const { #check };)),
    };
    let guarding = match (&args, &track) {
        (Some(args), Some(_)) => Some(args),
        _ => None,
    };
    let is_trait_impl = block.trait_.is_some();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        match rewrite(method, guarding, is_trait_impl, &context) {
            Ok(Some(tokens)) => *item = ImplItem::Verbatim(tokens),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    let errors = errors
        .finish()
        .err()
        .map(|e| e.to_compile_error())
        .unwrap_or_default();
    // A block that names its system checks it against the settings file, and does not
    // track the file: its type's derive, which must declare the same system, tracks it
    // for the crate (rustc expands every macro of a crate again when it recompiles it).
    let checked = track.is_some();
    // Only when the block's own system passed its check: a system missing from the
    // settings file is one error, on its literal, not a second one from this check.
    let check = (!generic && checked)
        .then(|| check(&self_ty.to_token_stream()))
        .flatten()
        .map(|check| {
            let span = args
                .as_ref()
                .and_then(|a| a.system.as_ref())
                .map_or_else(Span::call_site, LitStr::span);
            quote_spanned!(span=> const _: () = #check;)
        });
    // No record of the system (`calls`) either: the derive, which must declare the same
    // system for the block to compile, records it once for the type.
    quote! {
        #errors
        #check
        #block
    }
}

/// One method of the block: its guarded expansion, `None` to keep it as it is (markers
/// removed), or the error that it is neither guarded nor marked. With `args` `None` (the
/// block's own arguments are wrong), markers are only removed.
fn rewrite(
    method: &mut ImplItemFn,
    args: Option<&Args>,
    is_trait_impl: bool,
    block: &Block,
) -> syn::Result<Option<TokenStream>> {
    let refinements = take(&mut method.attrs, "circuit_breaker");
    let unguarded = take(&mut method.attrs, "unguarded");
    let mut errors = Errors::default();
    if let [_, second, ..] = refinements.as_slice() {
        errors.push(syn::Error::new_spanned(
            second,
            "`#[circuit_breaker]` is given twice on this method: merge the arguments into one",
        ));
    }
    if let [_, second, ..] = unguarded.as_slice() {
        errors.push(syn::Error::new_spanned(
            second,
            "`#[unguarded]` is given twice on this method: keep one",
        ));
    }
    if let (Some(marker), [_, ..]) = (unguarded.first(), refinements.as_slice()) {
        errors.push(syn::Error::new_spanned(
            marker,
            "a method is either guarded (`#[circuit_breaker(…)]`) or `#[unguarded]`, not both: remove one",
        ));
    }
    if let Some(marker) = unguarded.first() {
        if let Err(e) = reason(marker) {
            errors.push(e);
        }
        errors.finish()?;
        return Ok(None);
    }
    let asked = !refinements.is_empty();
    if !asked && !looks_async(method) {
        let public = matches!(method.vis, Visibility::Public(_));
        if is_trait_impl || public {
            errors.push(syn::Error::new(
                method.sig.ident.span(),
                format!(
                    "`{}` is neither guarded nor marked: every {} of an `#[outbound_guard::adapter]` block goes through its system's guard (R-RES-CB-1); make it an `async fn` returning `Result`, or mark it `#[unguarded(reason = \"…\")]` if it does no I/O",
                    method.sig.ident,
                    if is_trait_impl { "method of the port" } else { "public method" }
                ),
            ));
        }
        errors.finish()?;
        return Ok(None);
    }
    errors.finish()?;
    let Some(base) = args else {
        return Ok(None);
    };
    let args = match refinements.first() {
        Some(attr) => base.refine(arguments(attr)?)?,
        None => base.clone(),
    };
    let checked = validate::method(method.to_token_stream())?;
    Ok(Some(generate(
        &args,
        &checked,
        &Context {
            track: None,
            block: Some(block),
        },
    )))
}

/// The type's name without its path or generics: `SberAdapter` for
/// `crate::out::SberAdapter<T>`, as its derive knows it.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map_or_else(String::new, |s| s.ident.to_string()),
        other => other.to_token_stream().to_string(),
    }
}

/// Removes the attributes named `name` (as `name`, `outbound_guard::name` or any path
/// ending in it) from `attrs` and returns them.
fn take(attrs: &mut Vec<Attribute>, name: &str) -> Vec<Attribute> {
    let (taken, kept) = std::mem::take(attrs)
        .into_iter()
        .partition(|a| a.path().segments.last().is_some_and(|s| s.ident == name));
    *attrs = kept;
    taken
}

/// The tokens inside `#[circuit_breaker(…)]`; none for a bare `#[circuit_breaker]`.
fn arguments(attr: &Attribute) -> syn::Result<TokenStream> {
    match &attr.meta {
        Meta::Path(_) => Ok(TokenStream::new()),
        Meta::List(list) => Ok(list.tokens.clone()),
        Meta::NameValue(nv) => Err(syn::Error::new_spanned(
            nv,
            "write the arguments in parentheses: `#[circuit_breaker(slow_as_error)]`",
        )),
    }
}

/// `#[unguarded(reason = "…")]` with a reason that says something.
fn reason(attr: &Attribute) -> syn::Result<()> {
    let missing = || {
        syn::Error::new_spanned(
            attr,
            "`#[unguarded]` needs a reason, so a reviewer sees why this method may skip the breaker: `#[unguarded(reason = \"local cache, no I/O\")]`",
        )
    };
    let Meta::List(list) = &attr.meta else {
        return Err(missing());
    };
    let mut found = None;
    list.parse_nested_meta(|meta| {
        if meta.path.is_ident("reason") {
            let text: LitStr = meta.value()?.parse()?;
            found = Some(text);
            Ok(())
        } else {
            Err(meta.error("unknown argument; `#[unguarded]` takes `reason = \"…\"`"))
        }
    })?;
    match found {
        Some(text) if !text.value().trim().is_empty() => Ok(()),
        _ => Err(missing()),
    }
}

/// An `async fn`, or a `fn` returning a future (`impl Future`, or `Pin<Box<dyn Future>>`
/// as `#[async_trait]` leaves it): a method the block guards.
fn looks_async(method: &ImplItemFn) -> bool {
    if method.sig.asyncness.is_some() {
        return true;
    }
    let ReturnType::Type(_, ty) = &method.sig.output else {
        return false;
    };
    let text = match &**ty {
        Type::ImplTrait(_) | Type::Path(_) => ty.to_token_stream().to_string(),
        _ => return false,
    };
    text.contains("Future")
}

/// `tokens`, every one reported at `span` (and resolved as before): the system check's
/// errors point at the block's `system = "…"`.
fn located_at(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), located_at(group.stream(), span));
                inner.set_span(group.span().located_at(span));
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(token.span().located_at(span));
            }
            token
        })
        .collect()
}
