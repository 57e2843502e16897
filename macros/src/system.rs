//! An adapter's system, as a `system = "sber"` literal may name it on a method
//! (`#[circuit_breaker]`, the design card's form), on an `#[adapter]` block or on the
//! derive (`#[guarded]`): reading the literal wherever it came from, checking it against
//! the settings file, and the tokens that tie one level to another.
//!
//! The levels are checked for agreement where one macro sees both (a method's literal
//! against its block's: an error on the method's), and by the compiler where it does not
//! (a method's or block's literal against the derive's, which a macro cannot read): the
//! derive writes `impl Declares<Name<'s', 'b', 'e', 'r'>> for SberAdapter` (or, naming
//! no system, `Declares` of every name), and each method with a literal reaches its
//! guard through `Declares::<Name<…>>::guard_of(self)` spanned on it, which needs that impl, so a
//! disagreement is one type error on the literal to fix, in `cargo check` and in generic
//! impls too.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Expr, ExprLit, Lit, LitStr};

use crate::lookup::{settings, Lookup};

/// The `system = …` value as a string literal: also one a `macro_rules!` passed on
/// (`$system:literal` or `:expr` arrives in an invisible group). `default` is refused
/// (R-RES-CB-X3).
pub(crate) fn literal(value: &Expr) -> syn::Result<LitStr> {
    let Some(lit) = string(value) else {
        return Err(syn::Error::new_spanned(
            value,
            "`system` takes a string literal naming a table of resilience.toml, such as `system = \"sber\"`: it is checked at compile time, so it cannot be a constant or an expression",
        ));
    };
    if lit.value() == outbound_guard_settings::__private::FORBIDDEN_SYSTEM {
        return Err(syn::Error::new(
            lit.span(),
            "`default` is not a system: give each external system its own breaker, named after it, such as `system = \"sber\"` (R-RES-CB-X3)",
        ));
    }
    Ok(lit.clone())
}

/// The string literal `value` is, inside any invisible groups.
pub(crate) fn string(value: &Expr) -> Option<&LitStr> {
    match value {
        Expr::Group(group) => string(&group.expr),
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Some(lit),
        _ => None,
    }
}

/// What a literal brings where it is written, once it is checked against the settings
/// file: the item that makes cargo rebuild the crate when the file changes (unless the
/// crate's build script tracks it) and the link-time record that the binary calls the
/// system (a file mounted at run time must hold it). `who` names the attribute for the
/// settings file's errors (`` `#[guarded(system = …)]` ``); `by` says where it is
/// written, for the mounted file's error:
/// `` `#[circuit_breaker(system = "sber")]` on `register` ``.
pub(crate) fn declared_at(
    system: &LitStr,
    krate: &TokenStream,
    lookup: &dyn Lookup,
    who: &str,
    by: &str,
) -> syn::Result<TokenStream> {
    let track = settings(system, lookup, who)?;
    let calls = crate::calls::called(krate, system, by);
    Ok(quote!(#track #calls))
}

/// `#krate::__private::Name<'s', 'b', 'e', 'r'>`: the system's name as a type, sixteen
/// characters a level (a longer name goes on in the last parameter).
pub(crate) fn name_type(krate: &TokenStream, system: &LitStr) -> TokenStream {
    let chars: Vec<char> = system.value().chars().collect();
    name_of(krate, &chars, system.span())
}

fn name_of(krate: &TokenStream, chars: &[char], span: Span) -> TokenStream {
    let (head, rest) = chars.split_at(chars.len().min(16));
    let rest = if rest.is_empty() {
        None
    } else {
        let rest = name_of(krate, rest, span);
        // The sixteen characters of this level are all given before the rest.
        Some(quote_spanned!(span=> , #rest))
    };
    quote_spanned!(span=> #krate::__private::Name<#(#head),* #rest>)
}

/// The path that reaches the adapter's guard for a method of `system`:
/// `#krate::__private::Declares::<Name<…>>::guard_of`, spanned on the literal, so that a type
/// whose derive declares another system (or no derive) is one error there.
pub(crate) fn guard_of(krate: &TokenStream, system: &LitStr) -> TokenStream {
    let name = name_type(krate, system);
    quote_spanned!(system.span()=> #krate::__private::Declares::<#name>::guard_of)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn a_name_is_its_characters_sixteen_a_level() {
        let krate = quote!(::outbound_guard);
        let short = name_type(&krate, &LitStr::new("sber", Span::call_site())).to_string();
        assert_eq!(
            short,
            quote!(::outbound_guard::__private::Name<'s', 'b', 'e', 'r'>).to_string()
        );
        let long = name_type(
            &krate,
            &LitStr::new("fiscal_receipts_v2_x", Span::call_site()),
        )
        .to_string();
        assert_eq!(
            long,
            quote!(::outbound_guard::__private::Name<
                'f', 'i', 's', 'c', 'a', 'l', '_', 'r', 'e', 'c', 'e', 'i', 'p', 't', 's', '_',
                ::outbound_guard::__private::Name<'v', '2', '_', 'x'>
            >)
            .to_string()
        );
    }

    #[test]
    fn a_literal_a_macro_passed_on_is_a_literal() {
        let grouped = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!("sber"));
        let value: Expr = syn::parse2(quote!(#grouped)).unwrap();
        assert_eq!(literal(&value).unwrap().value(), "sber");
        let value: Expr = syn::parse2(quote!(SBER)).unwrap();
        let error = literal(&value).err().unwrap().to_string();
        assert!(error.contains("takes a string literal"), "{error}");
        let value: Expr = syn::parse2(quote!("default")).unwrap();
        let error = literal(&value).err().unwrap().to_string();
        assert!(error.contains("`default` is not a system"), "{error}");
    }
}
