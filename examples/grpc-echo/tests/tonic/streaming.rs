//! What the guard covers of a server stream. By default the whole call: the permit and
//! the total timeout last until the stream's end, and a status in its trailers counts.
//! With `until_headers`, the guard ends at the response headers, for long-lived
//! streams: the stream then runs past `total_timeout`, outside the bulkhead.

use std::time::Duration;

use grpc_echo_example::TestServer;
use outbound_guard::{Cause, State};
use outbound_guard_tonic::GrpcGuardLayer;
use tonic::Code;

use super::{client, client_with, count, eventually, guard, guard_error, stream, ROOMY};

/// A total timeout well inside the streams below, and a slow threshold out of their way.
const SHORT: &str = "\
connect_timeout = \"200ms\"
read_timeout = \"400ms\"
total_timeout = \"800ms\"
cb_slow_threshold = \"700ms\"
";

/// A stream of 20 replies 100 ms apart: two seconds, well past `total_timeout`.
const LONG_N: u32 = 20;
const INTERVAL: Duration = Duration::from_millis(100);

#[tokio::test]
async fn a_stream_longer_than_total_timeout_is_cut_as_deadline_exceeded_and_counted() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, SHORT);
    let mut client = client(&guard);

    let mut stream = stream(&mut client, LONG_N, INTERVAL, Code::Ok).await;
    assert_eq!(stream.message().await.unwrap().unwrap().i, 1);
    // Mid-stream: the call still holds its permit.
    assert_eq!(guard.in_flight(), 1);

    let mut received = 1;
    let status = loop {
        match stream.message().await {
            Ok(Some(_)) => received += 1,
            Ok(None) => panic!("the stream ran to its end, past the total timeout"),
            Err(status) => break status,
        }
    };

    assert!(received < LONG_N, "{received} replies");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    assert!(matches!(error.cause(), Cause::Timeout { .. }), "{error:?}");
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (1, 1));
    assert_eq!(guard.in_flight(), 0);
    // The server's stream lost its reader: it stops instead of running on.
    drop(stream);
    assert!(eventually(|| server.streams_abandoned() == 1).await);
}

#[tokio::test]
async fn a_stream_within_total_timeout_holds_its_permit_to_the_end_and_succeeds() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    let mut stream = stream(&mut client, 3, Duration::from_millis(50), Code::Ok).await;
    let mut replies = Vec::new();
    while let Some(reply) = stream.message().await.unwrap() {
        if replies.is_empty() {
            assert_eq!(guard.in_flight(), 1, "mid-stream");
        }
        replies.push(reply.i);
    }
    drop(stream);

    assert_eq!(replies, [1, 2, 3]);
    assert_eq!(guard.in_flight(), 0);
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (0, 1));
}

#[tokio::test]
async fn an_error_in_the_trailers_after_messages_counts() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    let mut stream = stream(&mut client, 3, Duration::from_millis(10), Code::Internal).await;
    for i in 1..=3 {
        assert_eq!(stream.message().await.unwrap().unwrap().i, i);
    }
    let status = stream.message().await.unwrap_err();

    assert_eq!(status.code(), Code::Internal, "{status:?}");
    assert!(guard_error(&status).is_none(), "the server's own status");
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (1, 1));
}

#[tokio::test]
async fn a_stream_dropped_midway_gives_its_permit_back() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    let mut stream = stream(&mut client, LONG_N, INTERVAL, Code::Ok).await;
    stream.message().await.unwrap().unwrap();
    assert_eq!(guard.in_flight(), 1);
    drop(stream);

    assert_eq!(guard.in_flight(), 0);
    // The caller left: nothing is known of the system, nothing counts against it.
    assert_eq!(guard.breaker().snapshot().failures, 0);
    assert!(eventually(|| server.streams_abandoned() == 1).await);
}

#[tokio::test]
async fn until_headers_lets_a_stream_outlive_total_timeout_outside_the_bulkhead() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, SHORT);
    let layer = GrpcGuardLayer::new(guard.clone()).until_headers();
    let mut client = client_with(&guard, layer);

    // Fifteen replies 100 ms apart: past the total timeout.
    let mut stream = stream(&mut client, 15, INTERVAL, Code::Ok).await;
    // The guard ended with the headers: the permit is back already.
    assert_eq!(guard.in_flight(), 0);
    let mut replies = 0;
    while let Some(reply) = stream.message().await.unwrap() {
        replies += 1;
        assert_eq!(reply.i, replies);
    }

    assert_eq!(replies, 15);
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (0, 1));
}

#[tokio::test]
async fn until_headers_still_counts_a_status_in_headers() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let layer = GrpcGuardLayer::new(guard.clone()).until_headers();
    let mut client = client_with(&guard, layer);

    for _ in 0..5 {
        let refuse = grpc_echo_example::pb::CountRequest {
            code: Code::Unavailable as i32,
            ..Default::default()
        };
        let status = client.count(refuse).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    }

    assert_eq!(guard.breaker().snapshot().state, State::Open);
    assert_eq!(server.calls(), 5);
}

#[tokio::test]
async fn the_callers_deadline_cuts_a_stream_uncounted() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);
    let deadline = Duration::from_millis(300);

    let mut request = tonic::Request::new(count(LONG_N, INTERVAL, Code::Ok));
    request.set_timeout(deadline);
    let mut stream = client.count(request).await.unwrap().into_inner();
    let status = loop {
        match stream.message().await {
            Ok(Some(_)) => {}
            Ok(None) => panic!("the stream ran to its end, past the caller's deadline"),
            Err(status) => break status,
        }
    };

    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let sent = server.last_grpc_timeout().expect("a grpc-timeout header");
    assert!(sent <= deadline, "the server was told {sent:?}");
    assert_eq!(guard.breaker().snapshot().failures, 0);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test]
async fn until_headers_leaves_a_status_in_the_trailers_uncounted() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let layer = GrpcGuardLayer::new(guard.clone()).until_headers();
    let mut client = client_with(&guard, layer);

    let mut stream = stream(&mut client, 2, Duration::from_millis(10), Code::Unavailable).await;
    stream.message().await.unwrap().unwrap();
    stream.message().await.unwrap().unwrap();
    let status = stream.message().await.unwrap_err();

    // The caller sees the status; the guard, done at the headers, does not.
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (0, 1));
}
