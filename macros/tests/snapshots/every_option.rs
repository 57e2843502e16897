impl SberAdapter {
    async fn refund(&mut self, id: u64) -> Result<(), PaymentPortError> {
        const _: (&[u8], &[u8]) = (
            ::core::include_bytes!("/service/resilience.toml"),
            ::core::include_bytes!("/service/Cargo.toml"),
        );
        const _: () = {
            /// This binary calls `sber`: a settings file mounted at run time must hold it. linkme's `#[distributed_slice]` puts this entry in a link section of its own (`#[used]` keeps it), which the runtime reads as one slice, `CALLED_SYSTEMS`. The `unsafe` is linkme's and sound: `__typecheck` takes an uninhabited argument, so it never runs; it only proves that this static has the slice's element type, so every entry of the section is a `Called`.
            #[::my_resilience::__private::linkme::distributed_slice(
                ::my_resilience::__private::CALLED_SYSTEMS
            )]
            #[linkme(crate = ::my_resilience::__private::linkme)]
            static __CB_CALLS: ::my_resilience::__private::Called = ::my_resilience::__private::Called {
                system: "sber",
                by: "`#[circuit_breaker]` on `refund`",
            };
        };
        let __cb_guard = ::core::clone::Clone::clone(
            ::my_resilience::__private::guard(&*self, "sber"),
        );
        #[allow(unknown_lints, unused_braces)]
        let __cb_judged = __cb_guard
            .call_with(
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
