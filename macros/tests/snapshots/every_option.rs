impl SberAdapter {
    async fn refund(&mut self, id: u64) -> Result<(), PaymentPortError> {
        const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
        let __cb_map = ::my_resilience::__private::error_map::<
            Result<(), PaymentPortError>,
        >(PaymentPortError::system_unavailable);
        let __cb_guard = ::core::clone::Clone::clone(
            ::my_resilience::__private::guard(&*self, "sber"),
        );
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
                {
                    self.pending.remove(&id);
                    Ok(())
                }
            })
            .await;
        __cb_finished
            .failure_if(PaymentPortError::is_outage)
            .slow_as_error()
            .elapsed_check()
            .map_err(__cb_map)?
    }
}
