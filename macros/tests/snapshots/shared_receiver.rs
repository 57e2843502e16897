impl SberAdapter {
    pub async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
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
                {
                    let resp = self.http.post(self.url("/register")).send().await?;
                    Ok(self.mapper.to_domain(resp))
                }
            })
            .await;
        __cb_finished.elapsed_check().map_err(__cb_map)?
    }
}
