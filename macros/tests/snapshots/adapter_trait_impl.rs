impl PaymentPort for SberAdapter {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        let __cb_block_guard = ::outbound_guard::__private::declared(self);
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = ::outbound_guard::__private::call(
                __cb_block_guard,
                <Self as ::outbound_guard::SystemAdapter>::SYSTEM,
                ::outbound_guard::__private::options::<
                    Result<PaymentRef, PaymentPortError>,
                >()
                    .failure_if(PaymentPortError::is_outage),
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
    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
        let __cb_block_guard = ::outbound_guard::__private::declared(self);
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = ::outbound_guard::__private::call(
                __cb_block_guard,
                <Self as ::outbound_guard::SystemAdapter>::SYSTEM,
                ::outbound_guard::__private::options::<Result<(), PaymentPortError>>()
                    .failure_if(PaymentPortError::is_outage)
                    .slow_as_error(),
                async move {
                    if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                        Result<(), PaymentPortError>,
                    > {
                        return __cb_ret;
                    }
                    { self.confirm_at(payment).await }
                },
            )
            .await;
        ::outbound_guard::__private::flatten(
            __cb_judged,
            ::outbound_guard::__private::error_map::<
                Result<(), PaymentPortError>,
            >(|e| PaymentPortError::Slow(e)),
        )
    }
    fn last(&self) -> Option<PaymentRef> {
        self.cache.last()
    }
}
