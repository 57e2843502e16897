impl SberAdapter {
    fn register(
        &self,
        order: &Order,
    ) -> impl ::core::future::Future<
        Output = Result<PaymentRef, PaymentPortError>,
    > + Send {
        const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
        async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<PaymentRef, PaymentPortError>,
            > {
                return __cb_ret;
            }
            let __cb_guard = ::resilience::__private::guard(self, "sber");
            #[allow(unknown_lints, unused_braces)]
            let __cb_call = async move {
                if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                    Result<PaymentRef, PaymentPortError>,
                > {
                    return __cb_ret;
                }
                { self.send(order).await }
            };
            match __cb_guard
                .call_with(::resilience::CallOptions::for_call(&__cb_call), __cb_call)
                .await
            {
                ::core::result::Result::Ok(__cb_result) => __cb_result,
                ::core::result::Result::Err(__cb_error) => {
                    ::core::result::Result::Err(
                        ::resilience::__private::map_error(
                            PaymentPortError::system_unavailable,
                            __cb_error,
                        ),
                    )
                }
            }
        }
    }
}
