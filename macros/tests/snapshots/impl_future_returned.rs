impl SberAdapter {
    fn register(
        &self,
        order: &Order,
    ) -> impl ::core::future::Future<
        Output = Result<PaymentRef, PaymentPortError>,
    > + Send {
        async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<PaymentRef, PaymentPortError>,
            > {
                return __cb_ret;
            }
            let __cb_guard = ::outbound_guard::__private::declared(self);
            #[allow(unknown_lints, unused_braces)]
            let __cb_judged = ::outbound_guard::__private::call(
                    __cb_guard,
                    <Self as ::outbound_guard::SystemAdapter>::SYSTEM,
                    ::outbound_guard::__private::options::<
                        Result<PaymentRef, PaymentPortError>,
                    >(),
                    async move {
                        if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                            Result<PaymentRef, PaymentPortError>,
                        > {
                            return __cb_ret;
                        }
                        { self.send(order).await }
                    },
                )
                .await;
            ::outbound_guard::__private::flatten(
                __cb_judged,
                ::outbound_guard::__private::error_map::<
                    Result<PaymentRef, PaymentPortError>,
                >(PaymentPortError::system_unavailable),
            )
        }
    }
}
