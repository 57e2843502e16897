//! Is the item an async method with a body and a `self` receiver that returns a
//! `Result`? Each mistake is reported on the offending token.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{
    Block, Expr, FnArg, GenericArgument, ItemFn, PathArguments, ReturnType, Stmt, TraitItemFn,
    Type, TypeParamBound,
};

use crate::args::Errors;

/// How the method takes `self`, which decides how the guard is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// `&self`: the guard is borrowed for the call.
    Shared,
    /// `&mut self`, `self`, `self: Box<Self>`…: the guard is cloned first, so the body
    /// keeps its own access to `self`.
    Exclusive { by_deref: bool },
}

/// Where the method's async body is.
pub(crate) enum Body {
    /// `async fn … { body }`.
    Native(Block),
    /// A method `#[async_trait]` has already rewritten: `fn … -> Pin<Box<dyn Future>>`
    /// whose body is `Box::pin(async move { body })`.
    AsyncTrait(Block),
    /// `fn … -> impl Future<Output = Result<…>> + Send { async move { body } }`, the
    /// form rustc suggests for trait methods whose futures must be `Send`.
    ImplFuture(Block),
}

/// The method, checked.
pub(crate) struct Method {
    pub item: ItemFn,
    /// The declared `Result<…>` (for a `fn` that returns a future, its `Output`).
    pub ret: Type,
    pub receiver: Receiver,
    pub body: Body,
}

pub(crate) fn method(item: TokenStream) -> syn::Result<Method> {
    let item: ItemFn = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(item) => item,
        Err(_) => return Err(not_a_method(item)),
    };
    let sig = &item.sig;
    let mut errors = Errors::default();

    if let Some(constness) = &sig.constness {
        errors.push(syn::Error::new(
            constness.span(),
            "`#[circuit_breaker]` cannot guard a `const fn`: the guard awaits a bulkhead permit and a timeout at run time; remove `const`",
        ));
    }

    let future = future_shape(&item);
    // `fn … -> impl Future<Output = R>` whose body is not one `async` block: one error
    // on the body, and `R` stands as the return type so nothing else cascades.
    let returned_future = match (&future, &sig.output) {
        (None, ReturnType::Type(_, ty)) if sig.asyncness.is_none() => match &**ty {
            Type::ImplTrait(returned) => future_output(&returned.bounds),
            _ => None,
        },
        _ => None,
    };
    if let Some(output) = &returned_future {
        let span = item
            .block
            .stmts
            .iter()
            .find(|s| !matches!(s, Stmt::Expr(Expr::Async(_), None)))
            .map_or_else(|| item.block.span(), Spanned::span);
        errors.push(syn::Error::new(
            span,
            "the body of a `fn` returning `impl Future` must be one `async move { … }` block for `#[circuit_breaker]` to guard: move this statement inside the `async move` block",
        ));
        if !is_result(output) {
            errors.push(syn::Error::new(
                output.span(),
                "`#[circuit_breaker]` needs the future's `Output` to be `Result<_, YourPortError>`: the breaker's rejections become the port's error through `error_map`",
            ));
        }
    } else if sig.asyncness.is_none() && future.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span(),
            "`#[circuit_breaker]` needs an `async fn` (or a `fn` returning `impl Future<Output = Result<…>>` whose body is one `async move` block): the guard awaits a bulkhead permit and a timeout around the call; write `async fn`",
        ));
    }

    let receiver = if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        Some(match &*r.ty {
            Type::Reference(reference) if reference.mutability.is_none() => Receiver::Shared,
            Type::Path(path) if path.path.is_ident("Self") => {
                Receiver::Exclusive { by_deref: false }
            }
            _ => Receiver::Exclusive { by_deref: true },
        })
    } else {
        errors.push(syn::Error::new(
            sig.ident.span(),
            "`#[circuit_breaker]` goes on a method of an out-adapter that implements a port (R-RES-CB-1): it needs a `self` receiver, such as `&self`, to reach the adapter's guard",
        ));
        None
    };

    let ret = match (&future, &sig.output) {
        (Some((output, _)), _) => Some(output.clone()),
        (None, _) if returned_future.is_some() => None,
        (None, ReturnType::Type(_, ty)) if is_result(ty) => Some((**ty).clone()),
        (None, ReturnType::Type(_, ty)) => {
            errors.push(syn::Error::new(
                ty.span(),
                "`#[circuit_breaker]` needs the method to return `Result<_, YourPortError>`: the breaker's rejections become the port's error through `error_map`",
            ));
            None
        }
        (None, ReturnType::Default) => {
            errors.push(syn::Error::new(
                sig.paren_token.span.close(),
                "`#[circuit_breaker]` needs the method to return `Result<_, YourPortError>`: the breaker's rejections become the port's error through `error_map`",
            ));
            None
        }
    };

    errors.finish()?;
    let body = match future {
        Some((_, body)) => body,
        None => Body::Native((*item.block).clone()),
    };
    Ok(Method {
        ret: ret.expect("checked above"),
        receiver: receiver.expect("checked above"),
        body,
        item,
    })
}

fn not_a_method(item: TokenStream) -> syn::Error {
    if let Ok(decl) = syn::parse2::<TraitItemFn>(item.clone()) {
        if decl.default.is_none() {
            return syn::Error::new(
                decl.semi_token.span(),
                "`#[circuit_breaker]` needs the method's body: put it on the method in the adapter's `impl`, not on the trait's declaration",
            );
        }
    }
    let span = item
        .into_iter()
        .next()
        .map_or_else(proc_macro2::Span::call_site, |t| t.span());
    syn::Error::new(
        span,
        "`#[circuit_breaker]` goes on an async method of an out-adapter, such as `async fn register(&self, …) -> Result<…>` (R-RES-CB-1)",
    )
}

/// `Result<…>`, or an alias of it ending in `Result` (`io::Result<T>`, `PortResult<T>`).
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident.to_string().ends_with("Result")),
        Type::Group(group) => is_result(&group.elem),
        Type::Paren(paren) => is_result(&paren.elem),
        _ => false,
    }
}

/// A `fn` (not `async`) that returns a future of a `Result` from one `async` block:
/// what `#[async_trait]` leaves behind (`-> Pin<Box<dyn Future<Output = R> + …>>`,
/// body `Box::pin(async move { … })`), or `-> impl Future<Output = R> + …` with the
/// body `async move { … }`. Returns `R` and where the block is.
fn future_shape(item: &ItemFn) -> Option<(Type, Body)> {
    if item.sig.asyncness.is_some() {
        return None;
    }
    let ReturnType::Type(_, ty) = &item.sig.output else {
        return None;
    };
    let (output, body) = match (&**ty, item.block.stmts.as_slice()) {
        (Type::ImplTrait(returned), [Stmt::Expr(Expr::Async(inner), None)]) => (
            future_output(&returned.bounds)?,
            Body::ImplFuture(inner.block.clone()),
        ),
        (_, [Stmt::Expr(Expr::Call(call), None)]) => {
            let boxed = last_generic(&last_generic(ty, "Pin")?, "Box")?;
            let Type::TraitObject(object) = boxed else {
                return None;
            };
            let Expr::Path(func) = &*call.func else {
                return None;
            };
            if func.path.segments.last()?.ident != "pin" || call.args.len() != 1 {
                return None;
            }
            let Expr::Async(inner) = &call.args[0] else {
                return None;
            };
            (
                future_output(&object.bounds)?,
                Body::AsyncTrait(inner.block.clone()),
            )
        }
        _ => return None,
    };
    is_result(&output).then_some((output, body))
}

/// `R` of the `Future<Output = R>` among `bounds`.
fn future_output<P>(bounds: &syn::punctuated::Punctuated<TypeParamBound, P>) -> Option<Type> {
    bounds.iter().find_map(|bound| {
        let TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let segment = t.path.segments.last()?;
        if segment.ident != "Future" {
            return None;
        }
        let PathArguments::AngleBracketed(args) = &segment.arguments else {
            return None;
        };
        args.args.iter().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(assoc.ty.clone()),
            _ => None,
        })
    })
}

fn last_generic(ty: &Type, name: &str) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    let segment = path.path.segments.last()?;
    if segment.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    args.args.iter().find_map(|arg| match arg {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    })
}

#[cfg(test)]
mod tests;
