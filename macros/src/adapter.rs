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
//! (`confirm` with `slow_as_error` added) and the markers removed; before it, once, what
//! the block's `system = "sber"` brings (the settings file's tracking and the link-time
//! record of the system). A block that names no system calls the one its type's derive
//! declares (`#[guarded(system = "sber")]`); one that names it must name that one, if
//! the derive names any (checked by the compiler on the block's literal). A type may
//! have any number of blocks, expanded in any order.
//!
//! A method of a trait impl, or a `pub` method of an inherent block, that is neither
//! guarded nor marked `#[unguarded(reason = "…")]` is an error (R-RES-CB-1): a method
//! added later cannot silently skip the breaker.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{
    Attribute, Ident, ImplItem, ImplItemFn, ItemImpl, LitStr, Meta, ReturnType, Type, Visibility,
};

use crate::args::{Args, Errors};
use crate::expand::{declared, generate, guarded_by, GuardedBy, BLOCK_MARK};
use crate::lookup::Lookup;
use crate::validate;

/// The attribute: the block with every method guarded, or the errors next to the block
/// with the markers removed (so that one mistake does not cascade).
pub(crate) fn adapter(args: TokenStream, item: TokenStream, lookup: &dyn Lookup) -> TokenStream {
    // An `#[adapter]` expanded before this one (under any name) left its mark in the
    // methods it guarded: guarding them again would take two permits per call.
    if guarded_by(&item) == Some(GuardedBy::Block) {
        let mut tokens = syn::Error::new(
            Span::call_site(),
            "this block is already guarded by the `#[outbound_guard::adapter]` above: guarded twice, each call would take two bulkhead permits and count twice against the breaker; remove this attribute (merge its arguments into the other)",
        )
        .to_compile_error();
        tokens.extend(item);
        return tokens;
    }
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
    let mut args = Args::parse(args).map_err(|e| errors.push(e)).ok();
    // The block's system, checked against the settings file once, on its literal; a
    // block whose system fails that guards nothing (its methods keep their bodies), so
    // that one mistake is one error.
    let declared = match &args {
        Some(Args {
            system: Some(system),
            krate,
            ..
        }) => {
            let by = format!(
                "`#[adapter(system = {:?})]` on `{}`",
                system.value(),
                type_name(&block.self_ty)
            );
            let who = "this `#[outbound_guard::adapter]` block";
            match crate::system::declared_at(system, krate, lookup, who, &by) {
                Ok(declared) => declared,
                Err(e) => {
                    errors.push(e);
                    args = None;
                    TokenStream::new()
                }
            }
        }
        _ => TokenStream::new(),
    };
    // Every method reaches the guard through a call spanned on the self type: a type
    // that derives no `Guarded`, or declares no system, is one error there.
    let self_span = block.self_ty.span();
    let is_trait_impl = block.trait_.is_some();
    let mut guarded_any = false;
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        match rewrite(method, args.as_ref(), is_trait_impl, self_span, lookup) {
            Ok(Some(tokens)) => {
                *item = ImplItem::Verbatim(tokens);
                guarded_any = true;
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    if !guarded_any {
        mark_unguarded(&mut block);
    }
    let errors = errors
        .finish()
        .err()
        .map(|e| e.to_compile_error())
        .unwrap_or_default();
    quote! {
        #errors
        #declared
        #block
    }
}

/// A block whose methods are all kept as they are (each `#[unguarded]`, or a
/// constructor) still carries the block's mark, in its first function, so that a
/// second `#[adapter]` on it is the same one error as on a block that guards a method:
/// `let __cb_block_guard = "outbound_guard::adapter";`, a binding the compiler drops.
/// A block without functions has nothing to guard twice and stays as it is.
fn mark_unguarded(block: &mut ItemImpl) {
    let first = block.items.iter_mut().find_map(|item| match item {
        ImplItem::Fn(method) => Some(method),
        _ => None,
    });
    if let Some(method) = first {
        let mark = Ident::new(BLOCK_MARK, Span::call_site());
        // No lint attribute on it: with `#[allow(…)]` on this statement the next
        // `#[adapter]` did not find the mark (its ui case compiled; why is not known).
        // Its span is the attribute's, so clippy treats it as a macro's and is silent.
        let stmt: syn::Stmt = syn::parse_quote!(let #mark = "outbound_guard::adapter";);
        method.block.stmts.insert(0, stmt);
    }
}

/// The self type's name as an error names it: `SberAdapter` for `SberAdapter<T>`.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map_or_else(|| ty.to_token_stream().to_string(), |s| s.ident.to_string()),
        _ => ty.to_token_stream().to_string(),
    }
}

/// One method of the block: its guarded expansion, `None` to keep it as it is (markers
/// removed), or the error that it is neither guarded nor marked. With `args` `None` (the
/// block's own arguments are wrong), markers are only removed.
fn rewrite(
    method: &mut ImplItemFn,
    args: Option<&Args>,
    is_trait_impl: bool,
    self_span: Span,
    lookup: &dyn Lookup,
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
    let receiver = matches!(method.sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
    if !asked && !receiver {
        if let Err(e) = associated(method) {
            errors.push(e);
        }
        errors.finish()?;
        return Ok(None);
    }
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
    // A system the method names where its block names none is the method's own: checked
    // and recorded in its body (one the block names was, before the block).
    let declared = if base.system.is_none() {
        declared(&args, Some(&checked.item.sig.ident), lookup)?
    } else {
        TokenStream::new()
    };
    Ok(Some(generate(&args, &checked, &declared, Some(self_span))))
}

/// An associated function (no `self`) of the block, unmarked: it cannot reach the
/// adapter's guard. A constructor (`fn new(guard: Guard) -> Self`) is left as it is; an
/// async one is an error saying what to do.
fn associated(method: &ImplItemFn) -> syn::Result<()> {
    if !looks_async(method) {
        return Ok(());
    }
    Err(syn::Error::new(
        method.sig.ident.span(),
        format!(
            "`{}` has no `self` receiver, so it cannot go through the adapter's guard: if it calls the system, take `&self`; if it builds the adapter (an async constructor), mark it `#[unguarded(reason = \"constructor, calls nothing\")]`",
            method.sig.ident
        ),
    ))
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
