use std::time::Duration;

use outbound_guard::{testing, Cause, Guards, State};
use testing_example::{PaymentError, SberAdapter};

#[tokio::test(start_paused = true)]
async fn an_open_breaker_refuses_until_its_trials() {
    let env = [("CLIENT_SBER__CB_OPEN_DURATION", "60")];
    let guards = Guards::new(&outbound_guard::settings!(env = env).unwrap());
    let sber = guards.try_adapter(SberAdapter::new).unwrap();
    let guard = guards.get("sber").unwrap();

    testing::open(&guard);
    let Err(PaymentError::Unavailable(refused)) = sber.register(42).await else {
        panic!("an open breaker refuses before any I/O");
    };
    assert_eq!(refused.system(), "sber");
    assert!(matches!(refused.cause(), Cause::Open { .. }));
    assert_eq!(refused.http_retry_after(), Duration::from_secs(60));

    testing::half_open(&guard).await; // the paused clock jumps 60 s
    assert_eq!(guard.breaker().state(), State::HalfOpen);
}
