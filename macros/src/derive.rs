//! `#[derive(Guarded)]`: the field of type `Guard` (or the one marked `#[guard]`) is the
//! adapter's guard.
//!
//! Input: `#[derive(Guarded)] struct SberAdapter { guard: Guard, http: Client }`.
//! Output:
//!
//! ```ignore
//! impl ::resilience::Guarded for SberAdapter {
//!     fn guard(&self) -> &::resilience::Guard {
//!         &self.guard
//!     }
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Index, Member, Type};

pub(crate) fn guarded(item: TokenStream) -> TokenStream {
    match expand(item) {
        Ok(tokens) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

fn expand(item: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(item)?;
    let krate = crate_path(&input)?;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "`#[derive(Guarded)]` goes on the adapter struct that holds its system's `resilience::Guard`",
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
        ([(member, _)], _) => member,
        ([_, second, ..], _) => {
            return Err(syn::Error::new(
                second.1.span(),
                "only one field may be marked `#[guard]`: an adapter calls one system (R-RES-ISO-1)",
            ))
        }
        ([], [(member, _)]) => member,
        ([], []) => {
            return Err(syn::Error::new(
                input.ident.span(),
                format!(
                    "`{}` has no field of type `resilience::Guard`: add one (built with `guards.get(\"system\")`), or mark the field that holds it with `#[guard]`",
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
    Ok(quote! {
        impl #impl_generics #krate::Guarded for #ident #ty_generics #where_clause {
            fn guard(&self) -> &#krate::Guard {
                &self.#member
            }
        }
    })
}

/// `Guard`, `resilience::Guard`, `::resilience::Guard`.
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

/// `#[resilience(crate = path)]` for a renamed dependency; `::resilience` otherwise.
fn crate_path(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut krate = quote!(::resilience);
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("resilience"))
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

    use super::guarded;

    #[test]
    fn a_generic_adapter_with_a_renamed_runtime() {
        let out = guarded(quote! {
            #[resilience(crate = ::payments_resilience)]
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
            struct Adapter(String, resilience::Guard);
        ))
        .to_string();
        assert!(out.contains("& self . 1"), "{out}");
    }

    #[test]
    fn an_unknown_container_argument_is_an_error() {
        let out = guarded(quote! {
            #[resilience(krate = ::x)]
            struct Adapter { guard: Guard }
        })
        .to_string();
        assert!(out.contains("expected `crate = path`"), "{out}");
    }
}
