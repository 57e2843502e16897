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
        const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
        ::std::boxed::Box::pin(async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<Customer, CustomerPortError>,
            > {
                return __cb_ret;
            }
            let __cb_guard = ::resilience::__private::guard(self, "customer");
            #[allow(unknown_lints, unused_braces)]
            let __cb_call = async move {
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
            };
            match __cb_guard
                .call_with(::resilience::CallOptions::for_call(&__cb_call), __cb_call)
                .await
            {
                ::core::result::Result::Ok(__cb_result) => __cb_result,
                ::core::result::Result::Err(__cb_error) => {
                    ::core::result::Result::Err(
                        ::resilience::__private::map_error(
                            CustomerPortError::system_unavailable,
                            __cb_error,
                        ),
                    )
                }
            }
        })
    }
}
