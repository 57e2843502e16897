impl SberAdapter {
    async fn refund(&mut self, id: u64) -> Result<(), PaymentPortError> {
        let __cb_guard = ::core::clone::Clone::clone(
            ::my_resilience::__private::declared(&*self),
        );
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = ::my_resilience::__private::call(
                &__cb_guard,
                <Self as ::my_resilience::SystemAdapter>::SYSTEM,
                ::my_resilience::__private::options::<Result<(), PaymentPortError>>()
                    .failure_if(PaymentPortError::is_outage)
                    .slow_as_error(),
                async move {
                    if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                        Result<(), PaymentPortError>,
                    > {
                        return __cb_ret;
                    }
                    {
                        self.pending.remove(&id);
                        Ok(())
                    }
                },
            )
            .await;
        ::my_resilience::__private::flatten(
            __cb_judged,
            ::my_resilience::__private::error_map::<
                Result<(), PaymentPortError>,
            >(PaymentPortError::system_unavailable),
        )
    }
}
