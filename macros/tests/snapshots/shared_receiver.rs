impl SberAdapter {
    pub async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
        let __cb_guard = ::resilience::__private::guard(self, "sber");
        #[allow(unknown_lints, unused_braces)]
        let __cb_call = async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<PaymentRef, PaymentPortError>,
            > {
                return __cb_ret;
            }
            {
                let resp = self.http.post(self.url("/register")).send().await?;
                Ok(self.mapper.to_domain(resp))
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
                        PaymentPortError::system_unavailable,
                        __cb_error,
                    ),
                )
            }
        }
    }
}
