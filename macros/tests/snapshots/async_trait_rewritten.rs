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
        ::std::boxed::Box::pin(async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<Customer, CustomerPortError>,
            > {
                return __cb_ret;
            }
            let __cb_guard = ::outbound_guard::__private::guard(self);
            #[allow(unknown_lints, unused_braces)]
            let __cb_judged = __cb_guard
                .call_with(
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
