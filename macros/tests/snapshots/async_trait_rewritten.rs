impl SberAdapter {
    fn get<'life0, 'async_trait>(
        &'life0 self,
        id: u64,
    ) -> ::core::pin::Pin<
        Box<
            dyn ::core::future::Future<
                Output = Result<Customer, CustomerPortError>,
            > + ::core::marker::Send + 'async_trait,
        >,
    >
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        const _: (&[u8], &[u8]) = (
            ::core::include_bytes!("/service/resilience.toml"),
            ::core::include_bytes!("/service/Cargo.toml"),
        );
        const _: () = {
            /// This binary calls `customer`: a settings file mounted at run time must hold it. linkme's `#[distributed_slice]` puts this entry in a link section of its own (`#[used]` keeps it), which the runtime reads as one slice, `CALLED_SYSTEMS`. The `unsafe` is linkme's and sound: `__typecheck` takes an uninhabited argument, so it never runs; it only proves that this static has the slice's element type, so every entry of the section is a `Called`.
            #[::outbound_guard::__private::linkme::distributed_slice(
                ::outbound_guard::__private::CALLED_SYSTEMS
            )]
            #[linkme(crate = ::outbound_guard::__private::linkme)]
            static __CB_CALLS: ::outbound_guard::__private::Called = ::outbound_guard::__private::Called {
                system: "customer",
                by: "`#[circuit_breaker(system = \"customer\")]` on `get`",
            };
        };
        ::std::boxed::Box::pin(async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<Customer, CustomerPortError>,
            > {
                return __cb_ret;
            }
            let __cb_guard = ::outbound_guard::__private::Declares::<
                ::outbound_guard::__private::Name<'c', 'u', 's', 't', 'o', 'm', 'e', 'r'>,
            >::guard_of(self);
            #[allow(unknown_lints, unused_braces)]
            let __cb_judged = ::outbound_guard::__private::call(
                    __cb_guard,
                    "customer",
                    ::outbound_guard::__private::options::<
                        Result<Customer, CustomerPortError>,
                    >(),
                    async move {
                        if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                            Result<Customer, CustomerPortError>,
                        > {
                            return __cb_ret;
                        }
                        {
                            let __self = self;
                            let __ret: Result<Customer, CustomerPortError> = {
                                __self.fetch(id).await
                            };
                            #[allow(unreachable_code)] __ret
                        }
                    },
                )
                .await;
            ::outbound_guard::__private::flatten(
                __cb_judged,
                ::outbound_guard::__private::error_map::<
                    Result<Customer, CustomerPortError>,
                >(CustomerPortError::system_unavailable),
            )
        })
    }
}
