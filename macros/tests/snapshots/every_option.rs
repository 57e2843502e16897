impl SberAdapter {
    async fn refund(&mut self, id: u64) -> Result<(), PaymentPortError> {
        const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
        let __cb_guard = ::core::clone::Clone::clone(
            ::my_resilience::__private::guard(&*self, "sber"),
        );
        #[allow(unknown_lints, unused_braces)]
        let __cb_call = async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<(), PaymentPortError>,
            > {
                return __cb_ret;
            }
            {
                self.pending.remove(&id);
                Ok(())
            }
        };
        match __cb_guard
            .call_with(
                ::my_resilience::CallOptions::for_call(&__cb_call)
                    .failure_if(PaymentPortError::is_outage)
                    .slow_as_error(),
                __cb_call,
            )
            .await
        {
            ::core::result::Result::Ok(__cb_result) => __cb_result,
            ::core::result::Result::Err(__cb_error) => {
                ::core::result::Result::Err(
                    ::my_resilience::__private::map_error(
                        PaymentPortError::system_unavailable,
                        __cb_error,
                    ),
                )
            }
        }
    }
}
