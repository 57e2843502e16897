//! Test support (feature `test-support`, for `[dev-dependencies]`): put a guard into the
//! state a test needs. Errors of each cause are built with
//! [`CircuitBreakerError::from_cause`](crate::CircuitBreakerError::from_cause).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! use outbound_guard::{testing, Cause, Guard, Settings, State};
//!
//! let settings = Settings::parse("[systems.sber]\ncb_open_duration = 30", "inline").unwrap();
//! let guard = Guard::new(settings.system("sber").unwrap());
//!
//! testing::open(&guard);
//! let err = guard.call(async { Ok::<_, ()>(()) }).await.unwrap_err();
//! assert!(matches!(err.cause(), Cause::Open { .. }));
//! assert!(err.retry_after().is_some()); // what a 503 handler puts in `Retry-After`
//!
//! testing::half_open(&guard).await; // paused time moves past the open duration
//! assert_eq!(guard.breaker().state(), State::HalfOpen);
//! assert!(guard.call(async { Ok::<_, ()>(()) }).await.is_ok()); // a trial call
//! # }
//! ```
//!
//! These helpers go through the breaker's public steps, so observers and metrics see
//! the calls and transitions they make.

use crate::guard::Guard;
use crate::state::State;
use crate::verdict::Verdict;

/// Opens `guard`'s breaker as failures would (it rejects with
/// [`Cause::Open`](crate::Cause::Open) and a `retry_after`, and goes half-open after
/// `cb_open_duration`), by recording failed calls until it trips. For a breaker held
/// open by an operator instead ([`Cause::ForcedOpen`](crate::Cause::ForcedOpen)), use
/// `guard.breaker().act(crate::ManualAction::ForceOpen)`.
///
/// # Panics
///
/// If the breaker is disabled or forced open, or does not open within a window's worth
/// of failures (it always does with valid settings).
pub fn open(guard: &Guard) {
    let breaker = guard.breaker();
    let settings = guard.settings();
    let most = settings.cb_window_size() + settings.cb_min_calls() + 1;
    for _ in 0..most {
        if breaker.state() == State::Open {
            return;
        }
        match breaker.try_acquire() {
            Ok(permit) => permit.finish(Verdict::FAILURE),
            Err(_) => break,
        }
    }
    assert_eq!(
        breaker.state(),
        State::Open,
        "the `{}` breaker did not open: it is disabled or forced open",
        guard.system()
    );
}

/// Opens `guard`'s breaker, moves paused tokio time past `cb_open_duration`, and lets
/// it go half-open: the next calls are its trial calls.
///
/// # Panics
///
/// If tokio's clock is not paused (`#[tokio::test(start_paused = true)]`, or
/// `tokio::time::pause()`), or as [`open`] does.
pub async fn half_open(guard: &Guard) {
    open(guard);
    tokio::time::advance(guard.settings().cb_open_duration()).await;
    // The first permission after the open duration moves the breaker to half-open;
    // dropping it unrecorded gives its trial slot back.
    drop(guard.breaker().try_acquire());
    assert_eq!(guard.breaker().state(), State::HalfOpen);
}
