const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
impl ::resilience::SystemAdapter for SberAdapter {
    const SYSTEM: &'static str = "sber";
}
impl PaymentPort for SberAdapter {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
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
            .call_with(
                ::resilience::CallOptions::for_call(&__cb_call)
                    .failure_if(PaymentPortError::is_outage),
                __cb_call,
            )
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
    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
        let __cb_guard = ::resilience::__private::guard(self, "sber");
        #[allow(unknown_lints, unused_braces)]
        let __cb_call = async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<(), PaymentPortError>,
            > {
                return __cb_ret;
            }
            { self.confirm_at(payment).await }
        };
        match __cb_guard
            .call_with(
                ::resilience::CallOptions::for_call(&__cb_call)
                    .failure_if(PaymentPortError::is_outage)
                    .slow_as_error(),
                __cb_call,
            )
            .await
        {
            ::core::result::Result::Ok(__cb_result) => __cb_result,
            ::core::result::Result::Err(__cb_error) => {
                ::core::result::Result::Err(
                    ::resilience::__private::map_error(
                        |e| PaymentPortError::Slow(e),
                        __cb_error,
                    ),
                )
            }
        }
    }
    fn last(&self) -> Option<PaymentRef> {
        self.cache.last()
    }
}
