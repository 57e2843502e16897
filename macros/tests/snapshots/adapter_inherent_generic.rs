impl<T: Transport> CustomerAdapter<T>
where
    T: Send,
{
    pub async fn get(&mut self, id: u64) -> Result<Customer, CustomerPortError> {
        let __cb_block_guard = ::core::clone::Clone::clone(
            ::outbound_guard::__private::declared(&*self),
        );
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = ::outbound_guard::__private::call(
                &__cb_block_guard,
                <Self as ::outbound_guard::SystemAdapter>::SYSTEM,
                ::outbound_guard::__private::options::<
                    Result<Customer, CustomerPortError>,
                >(),
                async move {
                    if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                        Result<Customer, CustomerPortError>,
                    > {
                        return __cb_ret;
                    }
                    { self.transport.get(id).await }
                },
            )
            .await;
        ::outbound_guard::__private::flatten(
            __cb_judged,
            ::outbound_guard::__private::error_map::<
                Result<Customer, CustomerPortError>,
            >(CustomerPortError::system_unavailable),
        )
    }
    fn url(&self) -> String {
        self.base.clone()
    }
}
