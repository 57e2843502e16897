//! Expansion snapshots: the generated code, pretty-printed, compared with the files in
//! `macros/tests/snapshots/` by `expect-test`. Run with `UPDATE_EXPECT=1` to rewrite
//! them, then read the diff.

use expect_test::{expect_file, ExpectFile};
use proc_macro2::TokenStream;
use quote::quote;

use crate::lookup::inline::{At, Inline};

const SETTINGS: Inline = Inline("[systems.sber]\ncb_failure_rate = 0.3\n[systems.customer]\n");

fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    super::circuit_breaker(args, item, &SETTINGS)
}

fn adapter(args: TokenStream, block: TokenStream) -> TokenStream {
    crate::adapter::adapter(args, block, &SETTINGS)
}

fn pretty(tokens: TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as items");
    prettyplease::unparse(&file)
}

/// Expands `args` on `item` (wrapped in an impl block so it pretty-prints) and compares
/// with the snapshot `name`.
fn snapshot(expected: &ExpectFile, args: TokenStream, method: TokenStream) {
    let expanded = circuit_breaker(args, method);
    expected.assert_eq(&pretty(quote!(impl SberAdapter { #expanded })));
}

/// The design card's sentence, as written.
#[test]
fn shared_receiver() {
    snapshot(
        &expect_file!["../../tests/snapshots/shared_receiver.rs"],
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
        &expect_file!["../../tests/snapshots/every_option.rs"],
        quote!(
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
        &expect_file!["../../tests/snapshots/async_trait_rewritten.rs"],
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
        &expect_file!["../../tests/snapshots/impl_future_returned.rs"],
        quote!(error_map = PaymentPortError::system_unavailable),
        quote! {
            fn register(&self, order: &Order) -> impl ::core::future::Future<Output = Result<PaymentRef, PaymentPortError>> + Send {
                async move { self.send(order).await }
            }
        },
    );
}

#[test]
fn errors_keep_the_method() {
    // A wrong argument is reported, and the method is emitted unchanged next to it.
    let expanded = circuit_breaker(
        quote!(error_map = E::map, bogus = 1),
        quote!(
            async fn f(&self) -> Result<(), E> {
                Ok(())
            }
        ),
    );
    let text = expanded.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("unknown argument `bogus`"), "{text}");
    assert!(text.contains("async fn f"), "{text}");
    assert!(!text.contains("__cb_guard"), "{text}");
}

#[test]
fn every_argument_error_at_once() {
    let expanded = circuit_breaker(
        quote!(system = SBER, bogus = 1, slow_as_error = true),
        quote!(
            fn f() {}
        ),
    )
    .to_string();
    for expected in [
        "`system` takes a string literal",
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

#[test]
fn a_system_on_the_method_is_checked_against_the_settings_on_its_literal() {
    let method = quote!(
        async fn register(&self) -> Result<(), E> {
            Ok(())
        }
    );
    let out = circuit_breaker(quote!(system = "sbr", error_map = E::map), method.clone());
    let out = out.to_string();
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(out.contains("did you mean `sber`?"), "{out}");
    // The method is emitted unchanged beside the one error.
    assert!(out.contains("async fn register"), "{out}");
    assert!(!out.contains("__cb_guard"), "{out}");
    for wrong in [
        quote!(system = "default"),
        quote!(system = SBER),
        quote!(system),
    ] {
        let out = circuit_breaker(quote!(#wrong, error_map = E::map), method.clone());
        assert_eq!(out.to_string().matches("compile_error").count(), 1, "{out}");
    }
}

#[test]
fn a_system_on_the_method_is_called_tracked_recorded_and_tied_to_the_type() {
    let out = circuit_breaker(
        quote!(system = "sber", error_map = E::map),
        quote!(
            async fn register(&self) -> Result<(), E> {
                Ok(())
            }
        ),
    )
    .to_string();
    for expected in [
        quote!(::core::include_bytes!("/service/resilience.toml")).to_string(),
        quote!(system: "sber", by: "`#[circuit_breaker(system = \"sber\")]` on `register`")
            .to_string(),
        ":: outbound_guard :: __private :: Declares :: < :: outbound_guard :: __private :: Name < 's' , 'b' , 'e' , 'r' > > :: guard_of (self)".to_owned(),
        ":: outbound_guard :: __private :: call (__cb_guard , \"sber\" ,".to_owned(),
    ] {
        assert!(out.contains(&expected), "missing {expected}:\n{out}");
    }
    assert!(!out.contains("SystemAdapter"), "{out}");
}

#[test]
fn a_method_without_a_system_calls_its_types() {
    let out = circuit_breaker(
        quote!(error_map = E::map),
        quote!(
            async fn register(&self) -> Result<(), E> {
                Ok(())
            }
        ),
    )
    .to_string();
    assert!(
        out.contains(&quote!(::outbound_guard::__private::declared(self)).to_string()),
        "{out}"
    );
    assert!(
        out.contains(&quote!(<Self as ::outbound_guard::SystemAdapter>::SYSTEM).to_string()),
        "{out}"
    );
    assert!(!out.contains("include_bytes"), "{out}");
    assert!(!out.contains("Name <"), "{out}");
}

#[test]
fn an_argument_without_its_value_says_it_takes_one() {
    for name in ["error_map", "failure_if", "crate"] {
        let argument: TokenStream = name.parse().unwrap();
        let expanded = circuit_breaker(
            quote!(#argument, error_map = E::map),
            quote!(
                async fn f(&self) -> Result<(), E> {
                    Ok(())
                }
            ),
        )
        .to_string();
        let expected = format!("`{name}` takes a value: `{name} = …`");
        assert!(expanded.contains(&expected), "{name}: {expanded}");
    }
}

/// Expands `#[adapter(args)]` on `block` and compares with the snapshot `name`.
fn adapter_snapshot(expected: &ExpectFile, args: TokenStream, block: TokenStream) {
    let expanded = adapter(args, block);
    expected.assert_eq(&pretty(expanded));
}

#[test]
fn adapter_trait_impl() {
    adapter_snapshot(
        &expect_file!["../../tests/snapshots/adapter_trait_impl.rs"],
        quote!(
            error_map = PaymentPortError::system_unavailable,
            failure_if = PaymentPortError::is_outage
        ),
        quote! {
            impl PaymentPort for SberAdapter {
                async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
                    self.send(order).await
                }

                #[circuit_breaker(slow_as_error, error_map = |e| PaymentPortError::Slow(e))]
                async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
                    self.confirm_at(payment).await
                }

                #[unguarded(reason = "reads the adapter's own cache, no I/O")]
                fn last(&self) -> Option<PaymentRef> {
                    self.cache.last()
                }
            }
        },
    );
}

#[test]
fn adapter_inherent_generic() {
    adapter_snapshot(
        &expect_file!["../../tests/snapshots/adapter_inherent_generic.rs"],
        quote!(error_map = CustomerPortError::system_unavailable),
        quote! {
            impl<T: Transport> CustomerAdapter<T> where T: Send {
                pub async fn get(&mut self, id: u64) -> Result<Customer, CustomerPortError> {
                    self.transport.get(id).await
                }

                fn url(&self) -> String {
                    self.base.clone()
                }
            }
        },
    );
}

fn adapter_errors(block: TokenStream) -> String {
    adapter(quote!(error_map = E::map), block).to_string()
}

#[test]
fn an_unmarked_port_method_is_an_error_and_the_rest_still_expands() {
    let out = adapter_errors(quote! {
        impl Port for A {
            fn cached(&self) -> u32 { 1 }
            async fn call(&self) -> Result<(), E> { Ok(()) }
        }
    });
    assert!(
        out.contains("`cached` is neither guarded nor marked"),
        "{out}"
    );
    assert!(out.contains("__cb_block_guard"), "{out}");
}

#[test]
fn a_private_helper_and_a_constructor_of_an_inherent_block_may_stay_plain() {
    let out = adapter_errors(quote! {
        impl A {
            fn url(&self) -> u32 { 1 }
            pub fn new(guard: Guard) -> Result<Self, Box<dyn Error>> { Ok(A { guard }) }
            pub fn status(&self) -> u32 { 1 }
        }
    });
    assert!(!out.contains("`url` is neither"), "{out}");
    assert!(!out.contains("`new`"), "{out}");
    assert!(
        out.contains("`status` is neither guarded nor marked"),
        "{out}"
    );
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
}

#[test]
fn an_async_function_without_a_receiver_in_a_block_is_one_error_saying_what_to_do() {
    let out = adapter_errors(quote! {
        impl A {
            pub async fn connect(url: &str) -> Result<Self, E> { Ok(A) }
        }
    });
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(out.contains("`connect` has no `self` receiver"), "{out}");
    assert!(out.contains("#[unguarded(reason"), "{out}");
}

#[test]
fn a_method_guarded_twice_is_one_error_whatever_the_attributes_are_called() {
    let method = quote!(
        async fn register(&self) -> Result<(), E> {
            Ok(())
        }
    );
    // The first attribute's expansion is the second's input, under any name.
    let once = circuit_breaker(quote!(system = "sber", error_map = E::map), method.clone());
    let twice = circuit_breaker(quote!(system = "sber", error_map = E::map), once.clone());
    let text = twice.to_string();
    assert_eq!(text.matches("compile_error").count(), 1, "{text}");
    assert!(
        text.contains("already guarded by the `#[circuit_breaker]` above"),
        "{text}"
    );
    // The method stays guarded once.
    assert_eq!(text.matches("let __cb_guard").count(), 1, "{text}");
    // A method its block guarded, then an aliased card: one error saying how to refine.
    let block = adapter(
        quote!(system = "sber", error_map = E::map),
        quote!(impl A { #[cb(slow_as_error)] #method }),
    );
    let file: syn::File = syn::parse2(block).unwrap();
    let Some(syn::Item::Impl(block)) = file.items.last() else {
        panic!("an impl block")
    };
    let guarded = &block.items[0];
    let text = circuit_breaker(quote!(slow_as_error), quote!(#guarded)).to_string();
    assert_eq!(text.matches("compile_error").count(), 1, "{text}");
    assert!(
        text.contains("already guarded by its `#[outbound_guard::adapter]` block"),
        "{text}"
    );
}

#[test]
fn a_block_guarded_twice_is_one_error() {
    let block = quote!(impl A {
        async fn register(&self) -> Result<(), E> { Ok(()) }
    });
    let once = adapter(quote!(system = "sber", error_map = E::map), block);
    let file: syn::File = syn::parse2(once).unwrap();
    let guarded = file.items.last().unwrap();
    let twice = adapter(
        quote!(system = "sber", error_map = E::map),
        quote!(#guarded),
    )
    .to_string();
    assert_eq!(twice.matches("compile_error").count(), 1, "{twice}");
    assert!(
        twice.contains("already guarded by the `#[outbound_guard::adapter]` above"),
        "{twice}"
    );
    assert_eq!(twice.matches("let __cb_block_guard").count(), 1, "{twice}");
}

#[test]
fn a_block_that_guards_no_method_guarded_twice_is_one_error() {
    let block = quote!(impl A {
        #[unguarded(reason = "a field read")]
        async fn ping(&self) -> Result<(), E> { Ok(()) }
    });
    let once = adapter(quote!(system = "sber", error_map = E::map), block);
    let file: syn::File = syn::parse2(once.clone()).unwrap();
    let kept = file.items.last().unwrap();
    let twice = adapter(quote!(system = "sber", error_map = E::map), quote!(#kept)).to_string();
    assert_eq!(twice.matches("compile_error").count(), 1, "{once}\n{twice}");
    assert!(
        twice.contains("already guarded by the `#[outbound_guard::adapter]` above"),
        "{twice}"
    );
}

#[test]
fn an_unknown_argument_gets_a_did_you_mean() {
    let out = circuit_breaker(
        quote!(sytem = "sber", error_map = E::map),
        quote!(
            async fn f(&self) -> Result<(), E> {
                Ok(())
            }
        ),
    )
    .to_string();
    assert!(
        out.contains("unknown argument `sytem`; did you mean `system`?"),
        "{out}"
    );
    let out = circuit_breaker(
        quote!(bogus = 3, error_map = E::map),
        quote!(
            async fn f(&self) -> Result<(), E> {
                Ok(())
            }
        ),
    )
    .to_string();
    assert!(!out.contains("did you mean"), "{out}");
}

#[test]
fn unguarded_needs_a_reason() {
    for marker in [
        quote!(#[unguarded]),
        quote!(#[unguarded(reason = "  ")]),
        quote!(#[outbound_guard::unguarded()]),
    ] {
        let out = adapter_errors(quote! {
            impl Port for A {
                #marker
                fn cached(&self) -> u32 { 1 }
            }
        });
        assert!(out.contains("`#[unguarded]` needs a reason"), "{out}");
        assert!(!out.contains("neither guarded"), "{out}");
    }
}

#[test]
fn a_method_of_a_block_may_repeat_its_system_but_not_name_another() {
    let block = |system: TokenStream| {
        adapter(
            quote!(system = "sber", error_map = E::map),
            quote! {
                impl Port for A {
                    #[circuit_breaker(#system)]
                    async fn call(&self) -> Result<(), E> { Ok(()) }
                }
            },
        )
        .to_string()
    };
    let same = block(quote!(system = "sber"));
    assert!(!same.contains("compile_error"), "{same}");
    // The block records and tracks the system once, before the impl; the method does not.
    assert_eq!(same.matches("include_bytes").count(), 2, "{same}");
    assert_eq!(same.matches("__CB_CALLS").count(), 1, "{same}");
    let other = block(quote!(system = "customer"));
    assert_eq!(other.matches("compile_error").count(), 1, "{other}");
    assert!(
        other.contains("this method calls `customer`, but its block, `#[adapter(system = \\\"sber\\\")]`, calls `sber`"),
        "{other}"
    );
}

#[test]
fn a_method_of_a_block_without_a_system_may_name_its_own() {
    let out = adapter(
        quote!(error_map = E::map),
        quote! {
            impl Port for A {
                #[circuit_breaker(system = "customer")]
                async fn call(&self) -> Result<(), E> { Ok(()) }
                async fn other(&self) -> Result<(), E> { Ok(()) }
            }
        },
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("`#[circuit_breaker(system = \\\"customer\\\")]` on `call`"),
        "{out}"
    );
    // The other method calls the type's system.
    assert!(out.contains("SystemAdapter"), "{out}");
}

#[test]
fn a_block_whose_system_is_unknown_is_one_error_and_guards_nothing() {
    let out = adapter(
        quote!(system = "sbr", error_map = E::map),
        quote! {
            impl Port for A {
                async fn call(&self) -> Result<(), E> { Ok(()) }
                #[unguarded(reason = "cache")]
                fn cached(&self) -> u32 { 1 }
            }
        },
    )
    .to_string();
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(out.contains("did you mean `sber`?"), "{out}");
    assert!(!out.contains("__cb_guard"), "{out}");
    assert!(!out.contains("unguarded"), "{out}");
}

#[test]
fn a_wrong_block_argument_keeps_the_block_without_markers() {
    let out = adapter(
        quote!(error_map = E::map, bogus = 1),
        quote! {
            impl Port for A {
                #[unguarded(reason = "cache")]
                fn cached(&self) -> u32 { 1 }
                async fn call(&self) -> Result<(), E> { Ok(()) }
            }
        },
    )
    .to_string();
    assert!(out.contains("unknown argument `bogus`"), "{out}");
    assert!(!out.contains("unguarded"), "{out}");
    assert!(!out.contains("__cb_guard"), "{out}");
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
}

/// A crate directory of its own with `settings` as its `resilience.toml`.
fn crate_dir(name: &str, settings: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("outbound-guard-pure-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"svc\"\n").unwrap();
    std::fs::write(dir.join("resilience.toml"), settings).unwrap();
    dir
}

/// Each macro expanded twice in one process, through the real lookup: the same output
/// both times, errors included.
#[test]
fn expanding_twice_gives_the_same_output() {
    for (name, settings, errors) in [
        ("good", "[systems.sber]\n", 0),
        ("bad-key", "[systems.sber]\ncb_failure_rat = 0.5\n", 1),
    ] {
        let lookup = At(crate_dir(name, settings));
        let card = quote!(system = "sber", error_map = E::map);
        // (expansion, whether it reads the settings file)
        let expansions: [(&dyn Fn() -> TokenStream, bool); 4] = [
            (
                &|| {
                    super::circuit_breaker(
                        card.clone(),
                        quote!(
                            async fn f(&self) -> Result<(), E> {
                                Ok(())
                            }
                        ),
                        &lookup,
                    )
                },
                true,
            ),
            (
                &|| {
                    crate::adapter::adapter(
                        card.clone(),
                        quote!(impl A { pub async fn f(&self) -> Result<(), E> { Ok(()) } }),
                        &lookup,
                    )
                },
                true,
            ),
            (
                &|| {
                    crate::adapter::adapter(
                        quote!(error_map = E::map),
                        quote!(impl Port for A { async fn f(&self) -> Result<(), E> { Ok(()) } }),
                        &lookup,
                    )
                },
                false,
            ),
            (
                &|| {
                    crate::derive::guarded(
                        quote!(
                            #[guarded(system = "sber")]
                            struct A {
                                guard: Guard,
                            }
                        ),
                        &lookup,
                    )
                },
                true,
            ),
        ];
        for (expand, reads) in expansions {
            let first = expand().to_string();
            let second = expand().to_string();
            assert_eq!(first, second, "{name}: a second expansion differs");
            assert_eq!(
                first.matches("compile_error").count(),
                if reads { errors } else { 0 },
                "{name}: {first}"
            );
            if reads && errors > 0 {
                assert!(first.contains("cb_failure_rate"), "{name}: {first}");
            } else {
                assert_eq!(first.contains("include_bytes"), reads, "{name}: {first}");
            }
        }
    }
}

/// However many `#[adapter]` blocks a type has and in whatever order they are expanded,
/// none implements `SystemAdapter` or `Declares` (its derive does): each checks the
/// system it names against the type's, or takes the type's.
#[test]
fn blocks_never_declare_the_system_for_their_type() {
    let blocks = [
        (
            quote!(system = "sber", error_map = E::map),
            quote!(impl A { pub async fn f(&self) -> Result<(), E> { Ok(()) } }),
        ),
        (
            quote!(error_map = E::map),
            quote!(impl A { pub async fn g(&self) -> Result<(), E> { Ok(()) } }),
        ),
        (
            quote!(system = "sber", error_map = E::map),
            quote!(impl Port for A { async fn h(&self) -> Result<(), E> { Ok(()) } }),
        ),
    ];
    for order in [[0, 1, 2], [2, 0, 1], [0, 2, 1]] {
        for i in order {
            let (args, block) = &blocks[i];
            let out = adapter(args.clone(), block.clone()).to_string();
            assert!(!out.contains("compile_error"), "{out}");
            assert!(!out.contains("SystemAdapter for"), "{out}");
            // No `impl Declares<…> for A`: the methods only call through it.
            assert!(!out.contains("> for A"), "{out}");
        }
    }
}
