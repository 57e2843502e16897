//! Expansion snapshots: the generated code, pretty-printed, compared with the files in
//! `macros/tests/snapshots/`. Run with `BLESS=1` to rewrite them, then read the diff.

use proc_macro2::TokenStream;
use quote::quote;

use super::circuit_breaker;
use crate::lookup::inline::Inline;

const SETTINGS: Inline = Inline("[systems.sber]\ncb_failure_rate = 0.3\n[systems.customer]\n");

fn pretty(tokens: TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as items");
    prettyplease::unparse(&file)
}

/// Expands `args` on `item` (wrapped in an impl block so it pretty-prints) and compares
/// with the snapshot `name`.
fn snapshot(name: &str, args: TokenStream, method: TokenStream) {
    let expanded = circuit_breaker(args, method, &SETTINGS);
    let actual = pretty(quote!(impl SberAdapter { #expanded }));
    let path = format!("{}/tests/snapshots/{name}.rs", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {path}; run with BLESS=1 to create it"));
    assert_eq!(
        actual, expected,
        "expansion of `{name}` changed; run with BLESS=1 and read the diff"
    );
}

#[test]
fn shared_receiver() {
    snapshot(
        "shared_receiver",
        quote!(
            system = "sber",
            error_map = PaymentPortError::system_unavailable
        ),
        quote! {
            pub async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
                let resp = self.http.post(self.url("/register")).send().await?;
                Ok(self.mapper.to_domain(resp))
            }
        },
    );
}

#[test]
fn every_option() {
    snapshot(
        "every_option",
        quote!(
            system = "sber",
            error_map = PaymentPortError::system_unavailable,
            failure_if = PaymentPortError::is_outage,
            slow_as_error,
            crate = ::my_resilience
        ),
        quote! {
            async fn refund(&mut self, id: u64) -> Result<(), PaymentPortError> {
                self.pending.remove(&id);
                Ok(())
            }
        },
    );
}

#[test]
fn async_trait_rewritten() {
    snapshot(
        "async_trait_rewritten",
        quote!(
            system = "customer",
            error_map = CustomerPortError::system_unavailable
        ),
        quote! {
            fn get<'life0, 'async_trait>(&'life0 self, id: u64)
                -> ::core::pin::Pin<Box<dyn ::core::future::Future<Output = Result<Customer, CustomerPortError>> + ::core::marker::Send + 'async_trait>>
            where 'life0: 'async_trait, Self: 'async_trait
            {
                Box::pin(async move {
                    let __self = self;
                    let __ret: Result<Customer, CustomerPortError> = { __self.fetch(id).await };
                    #[allow(unreachable_code)]
                    __ret
                })
            }
        },
    );
}

#[test]
fn impl_future_returned() {
    snapshot(
        "impl_future_returned",
        quote!(
            system = "sber",
            error_map = PaymentPortError::system_unavailable
        ),
        quote! {
            fn register(&self, order: &Order) -> impl ::core::future::Future<Output = Result<PaymentRef, PaymentPortError>> + Send {
                async move { self.send(order).await }
            }
        },
    );
}

#[test]
fn errors_keep_the_method() {
    // The unknown system is reported, and the method is emitted unchanged next to it.
    let expanded = circuit_breaker(
        quote!(system = "sbr", error_map = E::map),
        quote!(
            async fn f(&self) -> Result<(), E> {
                Ok(())
            }
        ),
        &SETTINGS,
    );
    let text = expanded.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("did you mean `sber`?"), "{text}");
    assert!(text.contains("async fn f"), "{text}");
    assert!(!text.contains("__cb_guard"), "{text}");
}

#[test]
fn every_argument_error_at_once() {
    let expanded = circuit_breaker(
        quote!(system = "default", bogus = 1, slow_as_error = true),
        quote!(
            fn f() {}
        ),
        &SETTINGS,
    )
    .to_string();
    for expected in [
        "`default` is not a system",
        "unknown argument `bogus`",
        "`slow_as_error` is a flag",
        "missing `error_map",
        "needs an `async fn`",
        "needs a `self` receiver",
        "needs the method to return `Result",
    ] {
        assert!(
            expanded.contains(expected),
            "missing {expected:?} in {expanded}"
        );
    }
}
