//! `#[derive(Guarded)]`: the field of type `Guard` (or the one marked `#[guard]`) is the
//! adapter's guard; `#[guarded(system = "sber")]` declares the adapter's system.
//!
//! Input: `#[derive(Guarded)] #[guarded(system = "sber")] struct SberAdapter { guard: Guard, http: Client }`.
//! Output:
//!
//! ```ignore
//! #[automatically_derived]
//! impl ::outbound_guard::Guarded for SberAdapter {
//!     fn guard(&self) -> &::outbound_guard::Guard {
//!         &self.guard
//!     }
//! }
//! #[automatically_derived]
//! impl ::outbound_guard::SystemAdapter for SberAdapter {
//!     const SYSTEM: &'static str = "sber";
//! }
//! ```
//!
//! On a mistake the error comes with the impls all the same (as thiserror's fallback
//! does): `impl Guarded` with a body that never runs and, if the input names a system,
//! `impl SystemAdapter` for it, so the adapter's methods and the place it is built add
//! no second error ("`Guarded` is not implemented").

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericArgument, Index, LitStr, Member, PathArguments, Type};

use crate::lookup::{settings, Lookup};

pub(crate) fn guarded(item: TokenStream, lookup: &dyn Lookup) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    match expand(&input, lookup) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.to_compile_error();
            let fallback = fallback(&input);
            quote!(#error #fallback)
        }
    }
}

/// The impls of an adapter whose derive failed: `impl Guarded` whose body never runs
/// (the crate does not compile), and `impl SystemAdapter` if a system is named, so
/// that the methods and the wiring do not report the missing impls again.
fn fallback(input: &DeriveInput) -> TokenStream {
    let krate = crate_path(input).unwrap_or_else(|_| quote!(::outbound_guard));
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let declared = named_system(input).map(|system| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::SystemAdapter for #ident #ty_generics #where_clause {
                const SYSTEM: &'static str = #system;
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Guarded for #ident #ty_generics #where_clause {
            fn guard(&self) -> &#krate::Guard {
                ::core::unreachable!()
            }
        }
        #declared
    }
}

/// The `system = "…"` literal of `#[guarded(…)]`, if one parses, whatever else is wrong
/// (a value that is no literal gives an empty name: the fallback never runs).
fn named_system(input: &DeriveInput) -> Option<LitStr> {
    let mut found = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("guarded")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("system") {
                found = Some(match meta.value()?.parse::<syn::Expr>()? {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(lit),
                        ..
                    }) => lit,
                    other => LitStr::new("", other.span()),
                });
            }
            Ok(())
        });
    }
    found
}

fn expand(input: &DeriveInput, lookup: &dyn Lookup) -> syn::Result<TokenStream> {
    let krate = crate_path(input)?;
    let system = system(input)?;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "`#[derive(Guarded)]` goes on the adapter struct that holds its system's `outbound_guard::Guard`",
        ));
    };
    let fields: Vec<(Member, &syn::Field)> = match &data.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .map(|f| (Member::Named(f.ident.clone().expect("named field")), f))
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| (Member::Unnamed(Index::from(i)), f))
            .collect(),
        Fields::Unit => Vec::new(),
    };
    let marked: Vec<_> = fields
        .iter()
        .filter(|(_, f)| f.attrs.iter().any(|a| a.path().is_ident("guard")))
        .collect();
    let by_type: Vec<_> = fields.iter().filter(|(_, f)| is_guard(&f.ty)).collect();
    let member = match (marked.as_slice(), by_type.as_slice()) {
        ([(member, _)], _) | ([], [(member, _)]) => member,
        ([_, second, ..], _) => {
            return Err(syn::Error::new(
                second.1.span(),
                "only one field may be marked `#[guard]`: an adapter calls one system (R-RES-ISO-1)",
            ))
        }
        ([], []) => {
            if let Some((_, field)) = fields.iter().find(|(_, f)| shared_guard(&f.ty)) {
                return Err(syn::Error::new(
                    field.ty.span(),
                    "hold the `outbound_guard::Guard` itself, not in an `Arc`: a `Guard` is already a shared handle (cloning it is one reference count), and `#[derive(Guarded)]` reaches the field directly",
                ));
            }
            return Err(syn::Error::new(
                input.ident.span(),
                format!(
                    "`{}` has no field of type `outbound_guard::Guard`: add one (built with `guards.get(\"system\")`), or mark the field that holds it with `#[guard]`",
                    input.ident
                ),
            ))
        }
        ([], [_, second, ..]) => {
            return Err(syn::Error::new(
                second.1.span(),
                "more than one field of type `Guard`: mark the one for this adapter's system with `#[guard]`",
            ))
        }
    };
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    // An unknown system is reported, and the impls are still emitted: the adapter's
    // users get no second error about them.
    let (declared, error) = match &system {
        Some(system) => {
            let (track, error) = match settings(system, lookup, "`#[guarded(system = …)]`") {
                Ok(track) => (track, None),
                Err(e) => (None, Some(e.to_compile_error())),
            };
            let by = format!("`#[guarded(system = {:?})]` on `{ident}`", system.value());
            let calls = crate::calls::called(&krate, system, &by);
            let declared = quote! {
                #track
                #calls
                #[automatically_derived]
                impl #impl_generics #krate::SystemAdapter for #ident #ty_generics #where_clause {
                    const SYSTEM: &'static str = #system;
                }
            };
            (Some(declared), error)
        }
        None => (None, None),
    };
    Ok(quote! {
        #error
        #[automatically_derived]
        impl #impl_generics #krate::Guarded for #ident #ty_generics #where_clause {
            fn guard(&self) -> &#krate::Guard {
                &self.#member
            }
        }
        #declared
    })
}

/// `Arc<Guard>` (or `Rc<Guard>`, `Box<Guard>`): a guard behind a pointer of its own.
fn shared_guard(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    if !["Arc", "Rc", "Box"].iter().any(|p| last.ident == p) {
        return false;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    args.args
        .iter()
        .any(|a| matches!(a, GenericArgument::Type(t) if is_guard(t)))
}

/// `#[guarded(system = "sber")]`: the adapter's system, if declared.
fn system(input: &DeriveInput) -> syn::Result<Option<LitStr>> {
    let mut system = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("guarded")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("system") {
                let lit = match meta.value()?.parse::<syn::Expr>()? {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(lit),
                        ..
                    }) => lit,
                    other => return Err(syn::Error::new_spanned(
                        other,
                        "`system` takes a string literal naming a table of resilience.toml, such as `system = \"sber\"`: it is checked at compile time, so it cannot be a constant or an expression",
                    )),
                };
                if lit.value() == outbound_guard_settings::__private::FORBIDDEN_SYSTEM {
                    return Err(syn::Error::new(
                        lit.span(),
                        "`default` is not a system: give each external system its own breaker, named after it, such as `system = \"sber\"` (R-RES-CB-X3)",
                    ));
                }
                system = Some(lit);
                Ok(())
            } else {
                Err(meta.error("unknown argument; `#[guarded]` takes `system = \"…\"`"))
            }
        })?;
    }
    Ok(system)
}

/// `Guard`, `outbound_guard::Guard`, `::outbound_guard::Guard`.
fn is_guard(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "Guard" && s.arguments.is_empty())
        }
        Type::Group(group) => is_guard(&group.elem),
        _ => false,
    }
}

/// `#[outbound_guard(crate = path)]` for a renamed dependency; `::outbound_guard` otherwise.
fn crate_path(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut krate = quote!(::outbound_guard);
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("outbound_guard"))
    {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let path: syn::Path = meta.value()?.parse()?;
                krate = path.to_token_stream();
                Ok(())
            } else {
                Err(meta.error("unknown argument; expected `crate = path`"))
            }
        })?;
    }
    Ok(krate)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::lookup::inline::Inline;

    const SETTINGS: Inline = Inline("[systems.sber]\n");

    fn guarded(item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
        super::guarded(item, &SETTINGS)
    }

    #[test]
    fn a_generic_adapter_with_a_renamed_runtime() {
        let out = guarded(quote! {
            #[outbound_guard(crate = ::payments_resilience)]
            struct Adapter<T: Transport> where T: Send {
                http: T,
                #[guard]
                sber: payments_resilience::Guard,
            }
        })
        .to_string();
        assert_eq!(
            out,
            quote! {
                #[automatically_derived]
                impl<T: Transport> ::payments_resilience::Guarded for Adapter<T> where T: Send {
                    fn guard(&self) -> &::payments_resilience::Guard {
                        &self.sber
                    }
                }
            }
            .to_string()
        );
    }

    #[test]
    fn a_tuple_adapter_found_by_type() {
        let out = guarded(quote!(
            struct Adapter(String, outbound_guard::Guard);
        ))
        .to_string();
        assert!(out.contains("& self . 1"), "{out}");
    }

    #[test]
    fn a_declared_system_implements_system_adapter() {
        let out = guarded(quote! {
            #[guarded(system = "sber")]
            struct Adapter { guard: Guard }
        })
        .to_string();
        assert!(
            out.contains(
                &quote!(impl ::outbound_guard::SystemAdapter for Adapter {
                    const SYSTEM: &'static str = "sber";
                })
                .to_string()
            ),
            "{out}"
        );
    }

    #[test]
    fn an_unknown_declared_system_is_one_error_and_the_impls_stay() {
        let out = guarded(quote! {
            #[guarded(system = "sbr")]
            struct Adapter { guard: Guard }
        })
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(out.contains("did you mean `sber`?"), "{out}");
        assert!(out.contains("Guarded for Adapter"), "{out}");
        assert!(out.contains("SystemAdapter for Adapter"), "{out}");
    }

    #[test]
    fn a_guard_in_an_arc_is_one_error_with_a_fallback_impl() {
        let out = guarded(quote! {
            struct Adapter { guard: std::sync::Arc<outbound_guard::Guard> }
        })
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(out.contains("not in an `Arc`"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }

    #[test]
    fn a_forbidden_system_is_one_error_with_both_fallback_impls() {
        let out = guarded(quote! {
            #[guarded(system = "default")]
            enum Adapter { Sber(Guard) }
        })
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(out.contains("`default` is not a system"), "{out}");
        assert!(out.contains("Guarded for Adapter"), "{out}");
        assert!(out.contains("SystemAdapter for Adapter"), "{out}");
        assert_eq!(out.matches("automatically_derived").count(), 2, "{out}");
    }

    #[test]
    fn a_guard_only_in_another_container_is_no_guard() {
        // `Rc` and `Box` are shared handles like `Arc`; a `Vec` or a plain type is no
        // guard at all.
        for (field, expected) in [
            (quote!(std::rc::Rc<Guard>), "not in an `Arc`"),
            (quote!(Box<Guard>), "not in an `Arc`"),
            (
                quote!(Vec<Guard>),
                "has no field of type `outbound_guard::Guard`",
            ),
            (
                quote!(Client),
                "has no field of type `outbound_guard::Guard`",
            ),
        ] {
            let out = guarded(quote!(struct Adapter { held: #field })).to_string();
            assert_eq!(out.matches("compile_error").count(), 1, "{out}");
            assert!(out.contains(expected), "{field}: {out}");
        }
    }

    #[test]
    fn a_guard_typed_through_a_macro_is_found() {
        // A type a `macro_rules!` passes on (`$ty:ty`) arrives in an invisible group.
        let guard = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!(Guard));
        let out = guarded(quote!(struct Adapter { http: Client, sber: #guard })).to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("& self . sber"), "{out}");
    }

    #[test]
    fn an_unknown_container_argument_is_an_error() {
        let out = guarded(quote! {
            #[outbound_guard(krate = ::x)]
            struct Adapter { guard: Guard }
        })
        .to_string();
        assert!(out.contains("expected `crate = path`"), "{out}");
    }
}
