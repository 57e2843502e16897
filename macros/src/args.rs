//! Parsing `#[circuit_breaker(system = "sber", error_map = Path, …)]`, collecting every
//! mistake in one pass.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprPath, Lit, LitStr, Meta, Path, Token};

/// The arguments the attribute accepts, in the order the error lists them.
pub(crate) const ACCEPTED: &str =
    "`system = \"…\"`, `error_map = path`, `failure_if = path`, `slow_as_error`, `crate = path`";

/// The attribute's arguments, checked for shape (not yet against the settings file).
pub(crate) struct Args {
    /// The `system = "sber"` literal, kept for its span.
    pub system: LitStr,
    /// `fn(CircuitBreakerError) -> PortError`.
    pub error_map: ExprPath,
    /// `fn(&PortError) -> bool`: which errors count as failures.
    pub failure_if: Option<ExprPath>,
    /// Slow calls come back as `Cause::Slow` instead of their value.
    pub slow_as_error: bool,
    /// The runtime crate's path, `::resilience` unless renamed.
    pub krate: TokenStream,
}

impl Args {
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Args> {
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens)?;
        let mut errors = Errors::default();
        let mut system: Option<LitStr> = None;
        // Set when `system` is given in a wrong form, which is reported as that alone.
        let mut system_given = false;
        let mut error_map = None;
        let mut failure_if = None;
        let mut slow_as_error = None;
        let mut krate = None;

        for meta in metas {
            let name = meta.path().to_token_stream().to_string().replace(' ', "");
            match (name.as_str(), &meta) {
                ("system", Meta::NameValue(nv)) => match &nv.value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(lit), ..
                    }) => set(&mut system, lit.clone(), &meta, &mut errors),
                    other => {
                        system_given = true;
                        errors.push(syn::Error::new_spanned(
                        other,
                        "`system` takes a string literal naming a table of resilience.toml, such as `system = \"sber\"`: it is checked at compile time, so it cannot be a constant or an expression",
                    ));
                    }
                },
                ("error_map", Meta::NameValue(nv)) => match path_value(&nv.value, "error_map") {
                    Ok(path) => set(&mut error_map, path, &meta, &mut errors),
                    Err(e) => errors.push(e),
                },
                ("failure_if", Meta::NameValue(nv)) => match path_value(&nv.value, "failure_if") {
                    Ok(path) => set(&mut failure_if, path, &meta, &mut errors),
                    Err(e) => errors.push(e),
                },
                ("slow_as_error", Meta::Path(_)) => set(&mut slow_as_error, (), &meta, &mut errors),
                ("crate", Meta::NameValue(nv)) => match crate_value(&nv.value) {
                    Ok(path) => set(&mut krate, path, &meta, &mut errors),
                    Err(e) => errors.push(e),
                },
                ("system" | "error_map" | "failure_if" | "crate", _) => errors.push(
                    syn::Error::new_spanned(&meta, format!("`{name}` takes a value: `{name} = …`")),
                ),
                ("slow_as_error", _) => errors.push(syn::Error::new_spanned(
                    &meta,
                    "`slow_as_error` is a flag and takes no value: write `slow_as_error`",
                )),
                _ => errors.push(syn::Error::new_spanned(
                    meta.path(),
                    format!("unknown argument `{name}`; expected one of {ACCEPTED}"),
                )),
            }
        }

        if system.is_none() && !system_given {
            errors.push(syn::Error::new(
                Span::call_site(),
                "missing `system = \"…\"`: name the external system this method calls, as its table in resilience.toml is named (`system = \"sber\"` for `[systems.sber]`)",
            ));
        }
        if error_map.is_none() {
            errors.push(syn::Error::new(
                Span::call_site(),
                "missing `error_map = …`: the breaker's error must not leave the adapter (R-RES-CB-6); name a function `fn(resilience::CircuitBreakerError) -> YourPortError`, such as `error_map = PaymentPortError::system_unavailable`",
            ));
        }
        if let Some(system) = &system {
            if system.value() == resilience_settings::FORBIDDEN_SYSTEM {
                errors.push(syn::Error::new(
                    system.span(),
                    "`default` is not a system: give each external system its own breaker, named after it, such as `system = \"sber\"` (R-RES-CB-X3)",
                ));
            }
        }
        errors.finish()?;
        Ok(Args {
            system: system.expect("checked above"),
            error_map: error_map.expect("checked above"),
            failure_if,
            slow_as_error: slow_as_error.is_some(),
            krate: krate.unwrap_or_else(|| quote!(::resilience)),
        })
    }
}

/// Sets an argument once; a second occurrence is an error on it.
fn set<T>(slot: &mut Option<T>, value: T, meta: &Meta, errors: &mut Errors) {
    if slot.is_some() {
        let name = meta.path().to_token_stream().to_string().replace(' ', "");
        errors.push(syn::Error::new(
            meta.path().span(),
            format!("duplicate argument `{name}`: give it once"),
        ));
    } else {
        *slot = Some(value);
    }
}

fn path_value(value: &Expr, name: &str) -> syn::Result<ExprPath> {
    match value {
        Expr::Path(path) => Ok(path.clone()),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{name}` takes the path of a function, such as `{name} = PaymentPortError::system_unavailable`"),
        )),
    }
}

fn crate_value(value: &Expr) -> syn::Result<TokenStream> {
    match value {
        Expr::Path(path) => Ok(path.to_token_stream()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit.parse::<Path>()?.to_token_stream()),
        other => Err(syn::Error::new_spanned(
            other,
            "`crate` takes the path the runtime crate is known by, such as `crate = ::my_resilience`",
        )),
    }
}

/// Errors gathered across all arguments, reported together.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}
