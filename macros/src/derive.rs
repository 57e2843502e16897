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
//! #[automatically_derived]
//! impl ::outbound_guard::__private::Declares<::outbound_guard::__private::Name<'s', 'b', 'e', 'r'>>
//!     for SberAdapter {}
//! ```
//!
//! `Declares` says which system the type's methods and blocks may name (see
//! `crate::system`); without `#[guarded(system = …)]` the type declares none and
//! implements it for every name, so that each method names its own.
//!
//! On a mistake the error comes with the impls all the same (as thiserror's fallback
//! does): `impl Guarded` with a body that never runs, `Declares` of every name and, if
//! the input names a system, `impl SystemAdapter` for it, so the adapter's methods and the
//! place it is built add no second error ("`Guarded` is not implemented").

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Fields, GenericArgument, Generics, Index, LitStr, Member, PathArguments,
    Type,
};

use crate::args::Errors;
use crate::lookup::Lookup;

pub(crate) fn guarded(item: TokenStream, lookup: &dyn Lookup) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::default();
    let container = Container::parse(&input, &mut errors);
    let member = guard_field(&input).map_err(|e| errors.push(e)).ok();
    // An unknown system is reported, and the impls are still emitted: the adapter's
    // users get no second error about them.
    let valid = container.system.as_ref().filter(|_| container.valid);
    let declared = valid.and_then(|system| {
        let by = format!(
            "`#[guarded(system = {:?})]` on `{}`",
            system.value(),
            input.ident
        );
        let who = "`#[guarded(system = …)]`";
        crate::system::declared_at(system, &container.krate, lookup, who, &by)
            .map_err(|e| errors.push(e))
            .ok()
    });
    let error = errors.finish().err().map(|e| e.to_compile_error());
    let impls = impls(&input, &container, member.as_ref(), declared.is_some());
    quote! {
        #error
        #declared
        #impls
    }
}

/// The container's attributes, each read once: `#[outbound_guard(crate = path)]` and
/// `#[guarded(system = "…")]`. A mistake in either is recorded in `errors` and the rest
/// still read, so the impls can be written all the same.
struct Container {
    /// The runtime's path, `::outbound_guard` unless renamed.
    krate: TokenStream,
    /// The declared system, as written (empty for a value that is no literal).
    system: Option<LitStr>,
    /// Whether that system is one a service may name: not `default`, a literal.
    valid: bool,
}

impl Container {
    fn parse(input: &DeriveInput, errors: &mut Errors) -> Container {
        let mut container = Container {
            krate: quote!(::outbound_guard),
            system: None,
            valid: false,
        };
        for attr in &input.attrs {
            let read = if attr.path().is_ident("outbound_guard") {
                attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("crate") {
                        let path: syn::Path = meta.value()?.parse()?;
                        container.krate = path.to_token_stream();
                        Ok(())
                    } else {
                        Err(meta.error("unknown argument; expected `crate = path`"))
                    }
                })
            } else if attr.path().is_ident("guarded") {
                attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("system") {
                        let value: syn::Expr = meta.value()?.parse()?;
                        if container.system.is_some() {
                            return Err(meta.error("duplicate argument `system`: give it once"));
                        }
                        // Kept even when wrong, for the impls that spare the adapter's
                        // users a second error.
                        let written = crate::system::string(&value).cloned();
                        container.system =
                            Some(written.unwrap_or_else(|| LitStr::new("", value.span())));
                        crate::system::literal(&value)?;
                        container.valid = true;
                        Ok(())
                    } else {
                        Err(meta.error("unknown argument; `#[guarded]` takes `system = \"…\"`"))
                    }
                })
            } else {
                Ok(())
            };
            if let Err(e) = read {
                errors.push(e);
            }
        }
        container
    }
}

/// The impls: `Guarded` reaching `member` (a body that never runs when there is none:
/// the crate does not compile), `SystemAdapter` and `Declares` of the declared system,
/// or `Declares` of every name when it declares none or the declaration failed its
/// check (`checked` false: the error is on the derive's literal, not on every method's).
fn impls(
    input: &DeriveInput,
    container: &Container,
    member: Option<&Member>,
    checked: bool,
) -> TokenStream {
    let Container { krate, system, .. } = container;
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let guard = member.map_or_else(
        || quote!(::core::unreachable!()),
        |member| quote!(&self.#member),
    );
    let adapter = system.as_ref().map(|system| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::SystemAdapter for #ident #ty_generics #where_clause {
                const SYSTEM: &'static str = #system;
            }
        }
    });
    let declares = match system {
        Some(system) if checked => {
            let name = crate::system::name_type(krate, system);
            // Spanned on the literal: a method naming another system is told where its
            // type declares its own.
            quote_spanned! {system.span()=>
                #[automatically_derived]
                impl #impl_generics #krate::__private::Declares<#name> for #ident #ty_generics #where_clause {}
            }
        }
        _ => {
            let mut generics: Generics = input.generics.clone();
            generics
                .params
                .push(syn::parse_quote!(__CbSystem: ?::core::marker::Sized));
            let (impl_generics, _, _) = generics.split_for_impl();
            quote! {
                #[automatically_derived]
                impl #impl_generics #krate::__private::Declares<__CbSystem> for #ident #ty_generics #where_clause {}
            }
        }
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Guarded for #ident #ty_generics #where_clause {
            fn guard(&self) -> &#krate::Guard {
                #guard
            }
        }
        #adapter
        #declares
    }
}

/// The field that holds the guard: the one marked `#[guard]`, else the one of type
/// `Guard`.
fn guard_field(input: &DeriveInput) -> syn::Result<Member> {
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
    match (marked.as_slice(), by_type.as_slice()) {
        ([(member, _)], _) | ([], [(member, _)]) => Ok(member.clone()),
        ([_, second, ..], _) => Err(syn::Error::new(
            second.1.span(),
            "only one field may be marked `#[guard]`: an adapter calls one system (R-RES-ISO-1)",
        )),
        ([], []) => {
            if let Some((_, field)) = fields.iter().find(|(_, f)| shared_guard(&f.ty)) {
                return Err(syn::Error::new(
                    field.ty.span(),
                    "hold the `outbound_guard::Guard` itself, not in an `Arc`: a `Guard` is already a shared handle (cloning it is one reference count), and `#[derive(Guarded)]` reaches the field directly",
                ));
            }
            Err(syn::Error::new(
                input.ident.span(),
                format!(
                    "`{}` has no field of type `outbound_guard::Guard`: add one (built with `guards.get(\"system\")`), or mark the field that holds it with `#[guard]`",
                    input.ident
                ),
            ))
        }
        ([], [_, second, ..]) => Err(syn::Error::new(
            second.1.span(),
            "more than one field of type `Guard`: mark the one for this adapter's system with `#[guard]`",
        )),
    }
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
                #[automatically_derived]
                impl<T: Transport, __CbSystem: ?::core::marker::Sized>
                    ::payments_resilience::__private::Declares<__CbSystem> for Adapter<T>
                where T: Send {}
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
        // Its methods and blocks may name `sber` alone.
        assert!(
            out.contains("Declares < :: outbound_guard :: __private :: Name < 's' , 'b' , 'e' , 'r' > > for Adapter"),
            "{out}"
        );
        assert!(!out.contains("__CbSystem"), "{out}");
    }

    #[test]
    fn a_system_a_macro_passed_on_is_declared() {
        let system = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote!("sber"));
        let out = guarded(quote! {
            #[guarded(system = #system)]
            struct Adapter { guard: Guard }
        })
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("const SYSTEM : & 'static str = \"sber\""),
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
        // Its methods that name `sbr` too get no second error: it declares every name.
        assert!(out.contains("Declares < __CbSystem >"), "{out}");
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
    fn a_forbidden_system_on_an_enum_is_both_errors_with_the_fallback_impls() {
        let out = guarded(quote! {
            #[guarded(system = "default")]
            enum Adapter { Sber(Guard) }
        })
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(out.contains("`default` is not a system"), "{out}");
        assert!(out.contains("goes on the adapter struct"), "{out}");
        assert!(out.contains("Declares < __CbSystem >"), "{out}");
        assert!(out.contains("Guarded for Adapter"), "{out}");
        assert!(out.contains("SystemAdapter for Adapter"), "{out}");
        assert_eq!(out.matches("automatically_derived").count(), 3, "{out}");
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
