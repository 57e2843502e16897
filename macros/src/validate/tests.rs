//! The checks of [`method`](super::method) without rustc: what each method shape is
//! taken for, and which errors a mistake gives, once each. The ui-tests show the same
//! errors as rustc prints them.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::{quote, ToTokens};

use super::{method, Body, Method, Receiver};

fn accepted(item: TokenStream) -> Method {
    method(item).unwrap_or_else(|e| panic!("rejected: {e}"))
}

/// Every error `item` gets, in order.
fn errors(item: TokenStream) -> Vec<syn::Error> {
    match method(item) {
        Ok(_) => panic!("accepted"),
        Err(error) => error.into_iter().collect(),
    }
}

fn messages(item: TokenStream) -> Vec<String> {
    errors(item).iter().map(ToString::to_string).collect()
}

fn tokens(ty: &impl ToTokens) -> String {
    ty.to_token_stream().to_string()
}

const NEEDS_RESULT: &str = "`#[circuit_breaker]` needs the method to return `Result<_, YourPortError>`: the breaker's rejections become the port's error through `error_map`";
const NEEDS_ASYNC: &str = "`#[circuit_breaker]` needs an `async fn`";
const ONE_ASYNC_BLOCK: &str =
    "the body of a `fn` returning `impl Future` must be one `async move { … }` block";
const OUTPUT_NOT_RESULT: &str = "`#[circuit_breaker]` needs the future's `Output` to be `Result";

#[test]
fn the_receiver_decides_how_the_guard_is_reached() {
    let receiver = |receiver: TokenStream| {
        accepted(quote!(async fn f(#receiver) -> Result<(), E> { Ok(()) })).receiver
    };
    assert_eq!(receiver(quote!(&self)), Receiver::Shared);
    assert_eq!(
        receiver(quote!(&mut self)),
        Receiver::Exclusive { by_deref: true }
    );
    assert_eq!(
        receiver(quote!(self)),
        Receiver::Exclusive { by_deref: false }
    );
    assert_eq!(
        receiver(quote!(self: Box<Self>)),
        Receiver::Exclusive { by_deref: true }
    );
}

#[test]
fn a_result_may_be_an_alias_in_parentheses_or_from_a_macro() {
    // A type a `macro_rules!` passes on (`$ret:ty`) arrives in an invisible group.
    let from_macro = Group::new(Delimiter::None, quote!(Result<(), E>));
    for ret in [
        quote!(Result<(), E>),
        quote!(std::io::Result<()>),
        quote!((Result<(), E>)),
        quote!(#from_macro),
    ] {
        let checked = accepted(quote!(async fn f(&self) -> #ret { Ok(()) }));
        assert_eq!(tokens(&checked.ret), ret.to_string());
        assert!(matches!(checked.body, Body::Native(_)));
    }
}

#[test]
fn a_return_type_that_is_no_result_is_one_error() {
    for ret in [quote!(String), quote!((String))] {
        assert_eq!(
            messages(quote!(async fn f(&self) -> #ret { String::new() })),
            [NEEDS_RESULT]
        );
    }
    // An `async fn` is never taken for a `fn` returning a future: its declared type is
    // what it returns, and that is no `Result`.
    assert_eq!(
        messages(quote!(
            async fn f(&self) -> impl Future<Output = Result<(), E>> {
                async move { Ok(()) }
            }
        )),
        [NEEDS_RESULT]
    );
}

#[test]
fn an_impl_future_with_statements_before_its_async_block_is_one_error_on_the_first() {
    // Parsed from text so that the spans say where each token is.
    let item: TokenStream = "fn f(&self) -> impl Future<Output = Result<(), E>> + Send {
            let answer = Ok(());
            async move { answer }
        }"
    .parse()
    .unwrap();
    let errors = errors(item);
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].starts_with(ONE_ASYNC_BLOCK), "{messages:?}");
    let at = errors[0].span().source_text().unwrap();
    assert!(at.starts_with("let answer"), "the error is on {at:?}");
}

#[test]
fn an_impl_future_of_no_result_with_statements_before_its_block_is_two_errors() {
    let messages = messages(quote!(
        fn f(&self) -> impl Future<Output = String> {
            let answer = String::new();
            async move { answer }
        }
    ));
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].starts_with(ONE_ASYNC_BLOCK), "{messages:?}");
    assert!(messages[1].starts_with(OUTPUT_NOT_RESULT), "{messages:?}");
}

#[test]
fn an_impl_futures_output_is_read_by_its_name() {
    let checked = accepted(quote!(
        fn f(&self) -> impl Future<Extra = String, Output = Result<(), E>> + Send {
            async move { Ok(()) }
        }
    ));
    assert_eq!(tokens(&checked.ret), quote!(Result<(), E>).to_string());
    assert!(matches!(checked.body, Body::ImplFuture(_)));
}

#[test]
fn only_box_pin_of_one_async_block_is_taken_for_async_trait() {
    let checked = accepted(quote!(
        fn f<'a>(&'a self) -> Pin<Box<dyn Future<Output = Result<(), E>> + Send + 'a>> {
            Box::pin(async move { Ok(()) })
        }
    ));
    assert!(matches!(checked.body, Body::AsyncTrait(_)));
    for body in [
        quote!(Box::new(async move { Ok(()) })),
        quote!(Box::pin(async move { Ok(()) }, 1)),
    ] {
        let messages = messages(quote!(
            fn f<'a>(&'a self) -> Pin<Box<dyn Future<Output = Result<(), E>> + Send + 'a>> {
                #body
            }
        ));
        assert_eq!(messages.len(), 2, "{body}: {messages:?}");
        assert!(messages[0].starts_with(NEEDS_ASYNC), "{body}: {messages:?}");
        assert_eq!(messages[1], NEEDS_RESULT, "{body}: {messages:?}");
    }
}
