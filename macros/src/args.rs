//! Parsing `#[circuit_breaker(system = "sber", error_map = Path, …)]` and `#[adapter(…)]`,
//! collecting every mistake in one pass. `system` may be left out where the adapter's
//! derive declares it (`#[guarded(system = "sber")]`) or, for a method, its block.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Path, Token};

/// The arguments the attribute accepts, in the order the error lists them.
pub(crate) const ACCEPTED: &str =
    "`system = \"…\"`, `error_map = path`, `failure_if = path`, `retry_after = path`, `slow_as_error`, `crate = path`";

/// The arguments' names, for the "did you mean" of an unknown one.
const NAMES: [&str; 6] = [
    "system",
    "error_map",
    "failure_if",
    "retry_after",
    "slow_as_error",
    "crate",
];

/// The arguments as written, each optional: a method under `#[adapter]` gives only
/// what it changes.
#[derive(Default)]
struct Given {
    system: Option<LitStr>,
    error_map: Option<Expr>,
    failure_if: Option<Expr>,
    retry_after: Option<Expr>,
    slow_as_error: Option<()>,
    krate: Option<TokenStream>,
}

/// The attribute's arguments, checked for shape (not yet against the settings file).
#[derive(Clone)]
pub(crate) struct Args {
    /// The `system = "sber"` literal, if given here (for a method in a block, its own or
    /// the block's); otherwise the method calls its type's declared system.
    pub system: Option<LitStr>,
    /// `fn(CircuitBreakerError) -> PortError`: a path or a closure.
    pub error_map: Expr,
    /// `fn(&PortError) -> bool`: which errors count as failures; a path or a closure.
    pub failure_if: Option<Expr>,
    /// `fn(&PortError) -> Option<Duration>`: the upstream's retry hint a counted error
    /// carries; a path or a closure.
    pub retry_after: Option<Expr>,
    /// Slow calls come back as `Cause::Slow` instead of their value.
    pub slow_as_error: bool,
    /// The runtime crate's path, `::outbound_guard` unless renamed.
    pub krate: TokenStream,
}

impl Args {
    /// The arguments of a method-level `#[circuit_breaker]` or of `#[adapter]`: every
    /// required one given.
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Args> {
        let mut errors = Errors::default();
        let given = Given::parse(tokens, &mut errors)?;
        if given.error_map.is_none() {
            errors.push(syn::Error::new(
                Span::call_site(),
                "missing `error_map = …`: the breaker's error must not leave the adapter (R-RES-CB-6); name a function `fn(outbound_guard::CircuitBreakerError) -> YourPortError`, such as `error_map = PaymentPortError::system_unavailable`",
            ));
        }
        errors.finish()?;
        Ok(Args {
            system: given.system,
            error_map: given.error_map.expect("checked above"),
            failure_if: given.failure_if,
            retry_after: given.retry_after,
            slow_as_error: given.slow_as_error.is_some(),
            krate: given.krate.unwrap_or_else(|| quote!(::outbound_guard)),
        })
    }

    /// A method's `#[circuit_breaker(…)]` inside an `#[adapter]` block: what it gives
    /// replaces the block's (`slow_as_error` is added). A system it names must be the
    /// block's, if the block names one: one error on the method's literal otherwise.
    pub(crate) fn refine(&self, tokens: TokenStream) -> syn::Result<Args> {
        let mut errors = Errors::default();
        let given = Given::parse(tokens, &mut errors)?;
        if let (Some(method), Some(block)) = (&given.system, &self.system) {
            if method.value() != block.value() {
                errors.push(syn::Error::new(
                    method.span(),
                    format!(
                        "this method calls `{}`, but its block, `#[adapter(system = \"{}\")]`, calls `{}`: an adapter calls one system (R-RES-ISO-1); make the two agree, or move the method to an adapter of its own",
                        method.value(),
                        block.value(),
                        block.value()
                    ),
                ));
            }
        }
        if let Some(krate) = &given.krate {
            errors.push(syn::Error::new_spanned(
                krate,
                "`crate` is set once, on the `#[adapter]` block",
            ));
        }
        errors.finish()?;
        Ok(Args {
            system: given.system.or_else(|| self.system.clone()),
            error_map: given.error_map.unwrap_or_else(|| self.error_map.clone()),
            failure_if: given.failure_if.or_else(|| self.failure_if.clone()),
            retry_after: given.retry_after.or_else(|| self.retry_after.clone()),
            slow_as_error: self.slow_as_error || given.slow_as_error.is_some(),
            krate: self.krate.clone(),
        })
    }
}

impl Given {
    /// Every argument, each mistake recorded in `errors`.
    fn parse(tokens: TokenStream, errors: &mut Errors) -> syn::Result<Given> {
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens)?;
        let mut given = Given::default();
        for meta in metas {
            let name = meta.path().to_token_stream().to_string().replace(' ', "");
            match (name.as_str(), &meta) {
                ("system", Meta::NameValue(nv)) => match crate::system::literal(&nv.value) {
                    Ok(lit) => set(&mut given.system, lit, &meta, errors),
                    Err(e) => errors.push(e),
                },
                ("error_map", Meta::NameValue(nv)) => {
                    match function_value(&nv.value, "error_map") {
                        Ok(path) => set(&mut given.error_map, path, &meta, errors),
                        Err(e) => errors.push(e),
                    }
                }
                ("failure_if", Meta::NameValue(nv)) => {
                    match function_value(&nv.value, "failure_if") {
                        Ok(path) => set(&mut given.failure_if, path, &meta, errors),
                        Err(e) => errors.push(e),
                    }
                }
                ("retry_after", Meta::NameValue(nv)) => {
                    match function_value(&nv.value, "retry_after") {
                        Ok(path) => set(&mut given.retry_after, path, &meta, errors),
                        Err(e) => errors.push(e),
                    }
                }
                ("slow_as_error", Meta::Path(_)) => {
                    set(&mut given.slow_as_error, (), &meta, errors);
                }
                ("crate", Meta::NameValue(nv)) => match crate_value(&nv.value) {
                    Ok(path) => set(&mut given.krate, path, &meta, errors),
                    Err(e) => errors.push(e),
                },
                ("system" | "error_map" | "failure_if" | "retry_after" | "crate", _) => errors
                    .push(syn::Error::new_spanned(
                        &meta,
                        format!("`{name}` takes a value: `{name} = …`"),
                    )),
                ("slow_as_error", _) => errors.push(syn::Error::new_spanned(
                    &meta,
                    "`slow_as_error` is a flag and takes no value: write `slow_as_error`",
                )),
                _ => {
                    let hint = outbound_guard_settings::__private::did_you_mean(&name, NAMES);
                    errors.push(syn::Error::new_spanned(
                        meta.path(),
                        format!("unknown argument `{name}`; {hint}expected one of {ACCEPTED}"),
                    ));
                }
            }
        }
        Ok(given)
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

/// A function's path, or a closure (which must not capture anything: it becomes a
/// function pointer).
fn function_value(value: &Expr, name: &str) -> syn::Result<Expr> {
    match value {
        Expr::Path(_) | Expr::Closure(_) => Ok(value.clone()),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{name}` takes a function's path or a closure, such as `{name} = PaymentPortError::system_unavailable`"),
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
