const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
impl<T: Transport> ::resilience::SystemAdapter for CustomerAdapter<T>
where
    T: Send,
{
    const SYSTEM: &'static str = "customer";
}
impl<T: Transport> CustomerAdapter<T>
where
    T: Send,
{
    pub async fn get(&mut self, id: u64) -> Result<Customer, CustomerPortError> {
        let __cb_guard = ::core::clone::Clone::clone(
            ::resilience::__private::guard(&*self, "customer"),
        );
        #[allow(unknown_lints, unused_braces)]
        let __cb_call = async move {
            if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                Result<Customer, CustomerPortError>,
            > {
                return __cb_ret;
            }
            { self.transport.get(id).await }
        };
        match __cb_guard
            .call_with(::resilience::CallOptions::for_call(&__cb_call), __cb_call)
            .await
        {
            ::core::result::Result::Ok(__cb_result) => __cb_result,
            ::core::result::Result::Err(__cb_error) => {
                ::core::result::Result::Err(
                    ::resilience::__private::map_error(
                        CustomerPortError::system_unavailable,
                        __cb_error,
                    ),
                )
            }
        }
    }
    fn url(&self) -> String {
        self.base.clone()
    }
}
