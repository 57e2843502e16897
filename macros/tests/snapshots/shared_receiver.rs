impl SberAdapter {
    pub async fn register(&self, order: &Order) -> Result<PaymentRef, PaymentPortError> {
        const _: (&[u8], &[u8]) = (
            ::core::include_bytes!("/service/resilience.toml"),
            ::core::include_bytes!("/service/Cargo.toml"),
        );
        const _: () = {
            /// This binary calls `sber`: a settings file mounted at run time must hold it. linkme's `#[distributed_slice]` puts this entry in a link section of its own (`#[used]` keeps it), which the runtime reads as one slice, `CALLED_SYSTEMS`. The `unsafe` is linkme's and sound: `__typecheck` takes an uninhabited argument, so it never runs; it only proves that this static has the slice's element type, so every entry of the section is a `Called`.
            #[::outbound_guard::__private::linkme::distributed_slice(
                ::outbound_guard::__private::CALLED_SYSTEMS
            )]
            #[linkme(crate = ::outbound_guard::__private::linkme)]
            static __CB_CALLS: ::outbound_guard::__private::Called = ::outbound_guard::__private::Called {
                system: "sber",
                by: "`#[circuit_breaker(system = \"sber\")]` on `register`",
            };
        };
        let __cb_guard = ::outbound_guard::__private::Declares::<
            ::outbound_guard::__private::Name<'s', 'b', 'e', 'r'>,
        >::guard_of(self);
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = ::outbound_guard::__private::call(
                __cb_guard,
                "sber",
                ::outbound_guard::__private::options::<
                    Result<PaymentRef, PaymentPortError>,
                >(),
                async move {
                    if let ::core::option::Option::Some(__cb_ret) = ::core::option::Option::None::<
                        Result<PaymentRef, PaymentPortError>,
                    > {
                        return __cb_ret;
                    }
                    {
                        let resp = self.http.post(self.url("/register")).send().await?;
                        Ok(self.mapper.to_domain(resp))
                    }
                },
            )
            .await;
        ::outbound_guard::__private::flatten(
            __cb_judged,
            ::outbound_guard::__private::error_map::<
                Result<PaymentRef, PaymentPortError>,
            >(PaymentPortError::system_unavailable),
        )
    }
}
