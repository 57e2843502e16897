const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
impl ::outbound_guard::SystemAdapter for SberAdapter {
    const SYSTEM: &'static str = "sber";
}
impl PaymentPort for SberAdapter {
    async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        let __cb_map = ::outbound_guard::__private::error_map::<
            Result<PaymentRef, PaymentPortError>,
        >(PaymentPortError::system_unavailable);
        let __cb_guard = ::outbound_guard::__private::guard(self, "sber");
        let __cb_permit = __cb_guard.enter_bulkhead().await.map_err(__cb_map)?;
        let __cb_call = __cb_permit.ask_breaker().map_err(__cb_map)?;
        #[allow(unknown_lints, unused_braces)]
        let __cb_finished = __cb_call
            .timeout(async move {
                if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                    Result<PaymentRef, PaymentPortError>,
                > {
                    return __cb_ret;
                }
                { self.send(order).await }
            })
            .await;
        __cb_finished
            .failure_if(PaymentPortError::is_outage)
            .elapsed_check()
            .map_err(__cb_map)?
    }
    async fn confirm(&self, payment: &PaymentRef) -> Result<(), PaymentPortError> {
        let __cb_map = ::outbound_guard::__private::error_map::<
            Result<(), PaymentPortError>,
        >(|e| PaymentPortError::Slow(e));
        let __cb_guard = ::outbound_guard::__private::guard(self, "sber");
        let __cb_permit = __cb_guard.enter_bulkhead().await.map_err(__cb_map)?;
        let __cb_call = __cb_permit.ask_breaker().map_err(__cb_map)?;
        #[allow(unknown_lints, unused_braces)]
        let __cb_finished = __cb_call
            .timeout(async move {
                if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                    Result<(), PaymentPortError>,
                > {
                    return __cb_ret;
                }
                { self.confirm_at(payment).await }
            })
            .await;
        __cb_finished
            .failure_if(PaymentPortError::is_outage)
            .slow_as_error()
            .elapsed_check()
            .map_err(__cb_map)?
    }
    fn last(&self) -> Option<PaymentRef> {
        self.cache.last()
    }
}
