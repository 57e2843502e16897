//! Deadlines that agree: the guard cuts a call at the earlier of its `total_timeout` and
//! the caller's own deadline (`grpc-timeout`), tells the server what is left of it, and
//! answers `DeadlineExceeded` either way; only its own timeout counts against the
//! system.

use std::time::{Duration, Instant};

use grpc_echo_example::TestServer;
use outbound_guard::{Cause, State};
use tonic::{Code, Request};

use grpc_echo_example::pb::echo_client::EchoClient;
use outbound_guard_tonic::GrpcGuardLayer;
use tower::Layer;

use super::{client, guard, guard_error, slow_echo, ROOMY};

/// A total timeout short enough for a quick test, long enough for a loaded machine
/// to connect and answer in.
const SHORT: &str = "\
connect_timeout = \"200ms\"
read_timeout = \"400ms\"
total_timeout = \"800ms\"
";
const TOTAL: Duration = Duration::from_millis(800);

/// The handler's wait in these tests: far past every deadline here.
const HUNG: Duration = Duration::from_secs(3);

#[tokio::test]
async fn the_guards_timeout_is_deadline_exceeded_and_counts() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, SHORT);

    let started = Instant::now();
    let status = client(&guard).echo(slow_echo(HUNG)).await.unwrap_err();
    let elapsed = started.elapsed();

    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    assert!(matches!(error.cause(), Cause::Timeout { .. }), "{error:?}");
    assert!(
        elapsed < HUNG,
        "cut at the total timeout, not at the answer: {elapsed:?}"
    );
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (1, 1));
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test]
async fn the_server_is_told_the_total_timeout() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);

    let reply = client(&guard)
        .echo(slow_echo(Duration::ZERO))
        .await
        .unwrap()
        .into_inner();

    let sent = server.last_grpc_timeout().expect("a grpc-timeout header");
    assert!(sent <= Duration::from_secs(5), "{sent:?}");
    assert!(sent > Duration::ZERO, "{sent:?}");
    assert_eq!(
        reply.grpc_timeout,
        server.grpc_timeouts()[0].clone().unwrap()
    );
}

#[tokio::test]
async fn the_callers_shorter_deadline_is_sent_kept_and_not_counted() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let deadline = Duration::from_millis(300);

    let mut request = Request::new(slow_echo(HUNG));
    request.set_timeout(deadline);
    let started = Instant::now();
    let status = client(&guard).echo(request).await.unwrap_err();
    let elapsed = started.elapsed();

    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let sent = server.last_grpc_timeout().expect("a grpc-timeout header");
    assert!(sent <= deadline, "the server was told {sent:?}");
    // At the caller's deadline: not before it, and long before the guard's 5 s.
    assert!(
        elapsed >= deadline - Duration::from_millis(50),
        "{elapsed:?}"
    );
    assert!(elapsed < HUNG, "{elapsed:?}");
    let snapshot = guard.breaker().snapshot();
    assert_eq!(
        snapshot.failures, 0,
        "the caller's deadline is not the system's failure"
    );
    assert_eq!(snapshot.state, State::Closed);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test]
async fn a_burst_of_callers_deadlines_leaves_the_breaker_closed() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    for _ in 0..6 {
        let mut request = Request::new(slow_echo(HUNG));
        request.set_timeout(Duration::from_millis(100));
        let status = client.echo(request).await.unwrap_err();
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    }

    assert_eq!(server.calls(), 6, "every call reached the server");
    let snapshot = guard.breaker().snapshot();
    assert_eq!(snapshot.state, State::Closed);
    assert_eq!(snapshot.failures, 0);
}

#[tokio::test]
async fn a_callers_longer_deadline_gives_way_to_the_total_timeout() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, SHORT);

    let mut request = Request::new(slow_echo(HUNG));
    request.set_timeout(Duration::from_secs(10));
    let status = client(&guard).echo(request).await.unwrap_err();

    let sent = server.last_grpc_timeout().expect("a grpc-timeout header");
    assert!(
        sent <= TOTAL,
        "the server was told {sent:?}, past the guard's deadline"
    );
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    assert!(matches!(error.cause(), Cause::Timeout { .. }), "{error:?}");
    assert_eq!(guard.breaker().snapshot().failures, 1);
}

#[tokio::test]
async fn a_slow_answer_is_returned_and_counts() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, &format!("{ROOMY}cb_slow_threshold = \"200ms\"\n"));

    let reply = client(&guard)
        .echo(slow_echo(Duration::from_millis(400)))
        .await
        .unwrap()
        .into_inner();

    assert_eq!(reply.message, "hello");
    let snapshot = guard.breaker().snapshot();
    assert_eq!(
        (snapshot.failures, snapshot.calls),
        (1, 1),
        "slower than cb_slow_threshold"
    );
}

#[tokio::test]
async fn the_channels_own_shorter_timeout_counts() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    // A timeout the service set on its endpoint by hand, shorter than total_timeout:
    // the system was given its time and did not answer.
    let channel = outbound_guard_tonic::endpoint(&guard.settings())
        .unwrap()
        .timeout(Duration::from_millis(300))
        .connect_lazy();
    let mut client = EchoClient::new(GrpcGuardLayer::new(guard.clone()).layer(channel));

    let started = Instant::now();
    let status = client.echo(slow_echo(HUNG)).await.unwrap_err();

    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(started.elapsed() < HUNG, "{:?}", started.elapsed());
    assert_eq!(guard.breaker().snapshot().failures, 1);
}
