//! Helpers shared by the runtime's integration tests (each test binary uses some of them).
#![allow(dead_code)]

use std::time::Duration;

use outbound_guard::{Breaker, Guard, GuardsBuilder, Settings, State, SystemSettings};

/// One second.
pub const S: Duration = Duration::from_secs(1);
/// One millisecond.
pub const MS: Duration = Duration::from_millis(1);

/// The `sber` system of a settings file with `extra` lines in its table.
pub fn system(extra: &str) -> SystemSettings {
    Settings::parse(&format!("[systems.sber]\n{extra}\n"), "inline")
        .unwrap()
        .system("sber")
        .unwrap()
        .clone()
}

/// A guard for [`system`]`(extra)`.
pub fn guard(extra: &str) -> Guard {
    Guard::new(&system(extra))
}

/// `builder` without the observer that logs transitions, for tests that read no log;
/// without the `tracing` feature there is no such observer to leave out.
pub fn without_log(builder: GuardsBuilder<'_>) -> GuardsBuilder<'_> {
    #[cfg(feature = "tracing")]
    let builder = builder.tracing(false);
    builder
}

/// The breaker's state and its window's failures and calls.
pub fn counts(breaker: &Breaker) -> (State, u32, u32) {
    let s = breaker.snapshot();
    (s.state, s.failures, s.calls)
}

/// What a held call's future gives: the guard's refusal, or the call's own result.
pub type Judged<T, E> = Result<Result<T, E>, outbound_guard::CircuitBreakerError>;

/// A guarded call admitted by the guard and still running: it holds a bulkhead permit
/// and the breaker's permission (a trial, while half-open) until it is [`finish`]ed with
/// the result it should end with, or dropped (cancelled).
///
/// [`finish`]: Held::finish
pub struct Held<'g, T = (), E = ()> {
    call: std::pin::Pin<Box<dyn std::future::Future<Output = Judged<T, E>> + Send + 'g>>,
    end: Option<tokio::sync::oneshot::Sender<Result<T, E>>>,
}

impl<T, E> Held<'_, T, E> {
    /// Ends the call with `result` now, and awaits the guard's judgement of it.
    pub async fn finish(mut self, result: Result<T, E>) -> Judged<T, E> {
        let _ = self.end.take().expect("finished once").send(result);
        self.call.as_mut().await
    }
}

/// Starts `guard.call_judged(options, …)` and drives it until the call itself runs (then
/// it is held, see [`Held`]), waiting for a bulkhead permit if need be; or the guard's
/// refusal, as the call would get it.
pub async fn hold_with<T: Send + 'static, E: Send + 'static>(
    guard: &Guard,
    options: outbound_guard::CallOptions<E>,
) -> Result<Held<'_, T, E>, outbound_guard::CircuitBreakerError> {
    let (end, ended) = tokio::sync::oneshot::channel::<Result<T, E>>();
    let (started, mut running) = tokio::sync::oneshot::channel::<()>();
    let mut call: std::pin::Pin<Box<dyn std::future::Future<Output = Judged<T, E>> + Send + '_>> =
        Box::pin(guard.call_judged(options, async move {
            let _ = started.send(());
            ended.await.expect("a held call is finished or dropped")
        }));
    std::future::poll_fn(|cx| match call.as_mut().poll(cx) {
        std::task::Poll::Ready(refused) => std::task::Poll::Ready(Err(refused
            .err()
            .expect("a held call cannot end before it is finished"))),
        std::task::Poll::Pending if running.try_recv().is_ok() => std::task::Poll::Ready(Ok(())),
        std::task::Poll::Pending => std::task::Poll::Pending,
    })
    .await?;
    Ok(Held {
        call,
        end: Some(end),
    })
}

/// [`hold_with`] the default options, for a call of `Result<(), ()>`.
pub async fn hold(guard: &Guard) -> Result<Held<'_>, outbound_guard::CircuitBreakerError> {
    hold_with(guard, outbound_guard::CallOptions::new()).await
}

/// A judge that hands the running call over, as a client whose verdict comes later does.
struct HandOver;

impl outbound_guard::Judge<()> for HandOver {
    type Output = outbound_guard::RunningCall;

    fn judge(
        &mut self,
        (): (),
        call: outbound_guard::RunningCall,
    ) -> Result<Self::Output, outbound_guard::CircuitBreakerError> {
        Ok(call)
    }
}

/// A call `guard` admitted, still running, for a test to finish: what a client judged
/// later (a gRPC body) holds.
pub async fn running_call(
    guard: &Guard,
) -> Result<outbound_guard::RunningCall, outbound_guard::CircuitBreakerError> {
    guard.call_judged(HandOver, async {}).await
}
