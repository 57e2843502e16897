//! The layer's readiness, as its docs say: the guarded service is ready when the service
//! it wraps is, also while the breaker is open; a refusal is that call's error, at once,
//! and never breaks a `Buffer` in front of the service.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use outbound_guard::{Guard, ManualAction, Settings, State};
use outbound_guard_tower::{GuardLayer, GuardedError};
use tower::buffer::Buffer;
use tower::{Layer, Service, ServiceExt};

fn guard() -> Guard {
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    Guard::new(settings.system("sber").unwrap())
}

/// A service answering its request back, counting the calls that reached it.
#[derive(Clone)]
struct Echo(Arc<AtomicUsize>);

impl Service<u32> for Echo {
    type Response = u32;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<u32, std::io::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, n: u32) -> Self::Future {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok(n))
    }
}

fn echo(calls: &Arc<AtomicUsize>) -> Echo {
    Echo(calls.clone())
}

#[tokio::test]
async fn an_open_breaker_leaves_the_service_ready_and_refuses_the_call_at_once() {
    let calls = Arc::new(AtomicUsize::new(0));
    let guard = guard();
    let mut service = GuardLayer::new(guard.clone()).layer(echo(&calls));
    guard.breaker().act(ManualAction::ForceOpen);
    let polled = service.poll_ready(&mut Context::from_waker(Waker::noop()));
    assert!(
        matches!(polled, Poll::Ready(Ok(()))),
        "ready, as the inner service is"
    );
    let refused = service.call(1).await.expect_err("forced open");
    assert!(matches!(refused, GuardedError::Guard(_)), "{refused:?}");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the request never reached it"
    );
}

#[tokio::test]
async fn behind_a_buffer_a_refusal_is_one_calls_error_and_the_buffer_goes_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let guard = guard();
    let mut buffered = Buffer::new(GuardLayer::new(guard.clone()).layer(echo(&calls)), 8);
    assert_eq!(buffered.ready().await.unwrap().call(1).await.unwrap(), 1);
    guard.breaker().act(ManualAction::ForceOpen);
    for n in 2..5 {
        let refused = buffered.ready().await.unwrap().call(n).await;
        let refused = refused.expect_err("forced open");
        let refused = refused
            .downcast_ref::<GuardedError<std::io::Error>>()
            .expect("the guard's refusal, through the buffer");
        assert!(matches!(refused, GuardedError::Guard(_)), "{refused:?}");
    }
    guard.breaker().act(ManualAction::Reset);
    assert_eq!(guard.breaker().state(), State::Closed);
    // The buffer's worker is still there: a readiness error would have ended it.
    assert_eq!(buffered.ready().await.unwrap().call(5).await.unwrap(), 5);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
