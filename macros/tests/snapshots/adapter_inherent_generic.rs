const _: &[u8] = ::core::include_bytes!("/service/resilience.toml");
impl<T: Transport> ::outbound_guard::SystemAdapter for CustomerAdapter<T>
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
        let __cb_map = ::outbound_guard::__private::error_map::<
            Result<Customer, CustomerPortError>,
        >(CustomerPortError::system_unavailable);
        let __cb_guard = ::core::clone::Clone::clone(
            ::outbound_guard::__private::guard(&*self, "customer"),
        );
        let __cb_permit = __cb_guard.enter_bulkhead().await.map_err(__cb_map)?;
        let __cb_call = __cb_permit.ask_breaker().map_err(__cb_map)?;
        #[allow(unknown_lints, unused_braces)]
        let __cb_finished = __cb_call
            .timeout(async move {
                if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                    Result<Customer, CustomerPortError>,
                > {
                    return __cb_ret;
                }
                { self.transport.get(id).await }
            })
            .await;
        __cb_finished.elapsed_check().map_err(__cb_map)?
    }
    fn url(&self) -> String {
        self.base.clone()
    }
}
