//! Which answers count against the breaker: the transient codes and transport errors
//! do, the client's own mistakes do not, whether the status travels in the response
//! headers (trailers-only) or in the trailers after the messages.

use std::time::Duration;

use grpc_echo_example::pb::CountRequest;
use grpc_echo_example::TestServer;
use outbound_guard::State;
use outbound_guard_tonic::GrpcGuardLayer;
use tonic::Code;

use super::{client, client_with, count, echo, guard, guard_at, guard_error, stream, ROOMY};

/// The codes of a system in trouble.
const TRANSIENT: [Code; 5] = [
    Code::Unavailable,
    Code::DeadlineExceeded,
    Code::ResourceExhausted,
    Code::Internal,
    Code::Unknown,
];

/// The codes of a caller's mistake, or of an answer: the system is working.
const CLIENT: [Code; 9] = [
    Code::InvalidArgument,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::Unauthenticated,
    Code::FailedPrecondition,
    Code::OutOfRange,
    Code::Aborted,
    Code::Unimplemented,
];

#[tokio::test]
async fn a_burst_of_unavailable_opens_the_breaker_and_stops_reaching_the_server() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    let mut reached = Vec::new();
    for _ in 0..10 {
        let status = client.echo(echo(Code::Unavailable)).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        reached.push(guard_error(&status).is_none());
    }

    // Five answers (cb_min_calls), all failures: open; the other five never left.
    assert_eq!(
        reached,
        [true, true, true, true, true, false, false, false, false, false]
    );
    assert_eq!(server.calls(), 5);
    let snapshot = guard.breaker().snapshot();
    assert_eq!(snapshot.state, State::Open);
    assert_eq!((snapshot.failures, snapshot.calls), (5, 5));
}

#[tokio::test]
async fn a_burst_of_client_errors_leaves_the_breaker_closed() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    for code in CLIENT {
        for _ in 0..3 {
            let status = client.echo(echo(code)).await.unwrap_err();
            // The server's own answer, untouched.
            assert_eq!(status.code(), code, "{status:?}");
            assert!(guard_error(&status).is_none(), "{status:?}");
        }
    }

    assert_eq!(server.calls(), 27);
    let snapshot = guard.breaker().snapshot();
    assert_eq!(snapshot.state, State::Closed);
    assert_eq!(snapshot.failures, 0);
    assert_eq!(
        snapshot.calls, 10,
        "every answer is in the window, as a success"
    );
}

#[tokio::test]
async fn each_transient_code_counts_as_a_failure() {
    let server = TestServer::start().await.unwrap();
    for code in TRANSIENT {
        let guard = guard(&server, ROOMY);
        let status = client(&guard).echo(echo(code)).await.unwrap_err();
        assert_eq!(status.code(), code, "{status:?}");
        let snapshot = guard.breaker().snapshot();
        assert_eq!((snapshot.failures, snapshot.calls), (1, 1), "{code:?}");
    }
}

#[tokio::test]
async fn an_answer_counts_as_a_success() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let reply = client(&guard)
        .echo(echo(Code::Ok))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.message, "hello");
    assert_eq!(reply.call, 1);
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (0, 1));
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test]
async fn a_transport_error_counts_and_reaches_the_caller_as_unavailable() {
    // A port that was just free: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let guard = guard_at(&url, ROOMY);

    let status = client(&guard).echo(echo(Code::Ok)).await.unwrap_err();

    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(
        guard_error(&status).is_none(),
        "the system failed, not the guard"
    );
    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (1, 1));
}

#[tokio::test]
async fn a_status_in_the_headers_of_a_stream_counts() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    // The handler refuses at once: a trailers-only response, the status in headers.
    let refuse = |code: Code| CountRequest {
        code: code as i32,
        ..CountRequest::default()
    };
    let status = client.count(refuse(Code::Unavailable)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let status = client.count(refuse(Code::NotFound)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    let snapshot = guard.breaker().snapshot();
    assert_eq!((snapshot.failures, snapshot.calls), (1, 2));
}

#[tokio::test]
async fn a_status_in_the_trailers_counts() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    for (end, failures) in [
        (Code::Unavailable, 1),
        (Code::NotFound, 1),
        (Code::Internal, 2),
    ] {
        // Headers say 200 and nothing more; the status comes after no message at all.
        let mut stream = stream(&mut client, 0, Duration::ZERO, end).await;
        let status = stream.message().await.unwrap_err();
        assert_eq!(status.code(), end, "{status:?}");
        drop(stream);
        assert_eq!(
            guard.breaker().snapshot().failures,
            failures,
            "after {end:?}"
        );
    }
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test]
async fn a_burst_of_unavailable_in_trailers_opens_the_breaker() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);

    for _ in 0..5 {
        let mut stream = stream(&mut client, 2, Duration::from_millis(10), Code::Unavailable).await;
        assert_eq!(stream.message().await.unwrap().unwrap().i, 1);
        assert_eq!(stream.message().await.unwrap().unwrap().i, 2);
        let status = stream.message().await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    }

    assert_eq!(guard.breaker().snapshot().state, State::Open);
    let status = client
        .count(count(2, Duration::ZERO, Code::Ok))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert!(
        guard_error(&status).is_some(),
        "refused by the guard: {status:?}"
    );
    assert_eq!(server.calls(), 5);
}

#[tokio::test]
async fn a_classifier_of_tower_http_decides_instead() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    // tower-http's: every code but OK is a failure, the client's mistakes included.
    let layer = GrpcGuardLayer::new(guard.clone())
        .failure_if(tower_http::classify::GrpcErrorsAsFailures::new());
    let mut client = client_with(&guard, layer);

    for _ in 0..5 {
        let status = client.echo(echo(Code::NotFound)).await.unwrap_err();
        assert_eq!(status.code(), Code::NotFound);
    }

    assert_eq!(guard.breaker().snapshot().state, State::Open);
    assert_eq!(server.calls(), 5);
}
