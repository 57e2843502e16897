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
            __cb_finished.elapsed_check().map_err(__cb_map)?
        }
    }
}
