//! A refusal a gRPC client understands: `Unavailable`, with the time until trial calls
//! as `grpc-retry-pushback-ms`, and the guard's `CircuitBreakerError` as the source.

use std::time::Duration;

use grpc_echo_example::pb::CountRequest;
use grpc_echo_example::TestServer;
use outbound_guard::{Cause, State};
use tonic::Code;

use super::{client, echo, eventually, guard, guard_error, pushback, slow_echo, ROOMY};

#[tokio::test]
async fn an_open_breaker_refuses_with_unavailable_and_a_pushback() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    let mut client = client(&guard);
    for _ in 0..5 {
        client.echo(echo(Code::Unavailable)).await.unwrap_err();
    }
    assert_eq!(guard.breaker().snapshot().state, State::Open);

    // A call that would succeed is not even tried.
    let status = client.echo(echo(Code::Ok)).await.unwrap_err();

    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    let Cause::Open { retry_after } = *error.cause() else {
        panic!("refused for another cause: {error:?}");
    };
    assert_eq!(error.system(), "echo");
    let pushback = pushback(&status).expect("grpc-retry-pushback-ms while open");
    assert!(pushback > Duration::ZERO, "{pushback:?}");
    assert!(pushback <= Duration::from_secs(30), "{pushback:?}");
    // The same delay, to the millisecond it is written in.
    assert!(
        pushback.abs_diff(retry_after) <= Duration::from_millis(1),
        "{pushback:?} vs {retry_after:?}"
    );
    assert_eq!(server.calls(), 5);
}

#[tokio::test]
async fn an_open_breaker_refuses_a_stream_too() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    guard.breaker().act(outbound_guard::ManualAction::ForceOpen);

    let status = client(&guard)
        .count(CountRequest::default())
        .await
        .unwrap_err();

    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    assert_eq!(*error.cause(), Cause::ForcedOpen);
    assert_eq!(server.calls(), 0);
}

#[tokio::test]
async fn a_forced_open_breaker_refuses_with_unavailable() {
    let server = TestServer::start().await.unwrap();
    let guard = guard(&server, ROOMY);
    guard.breaker().act(outbound_guard::ManualAction::ForceOpen);

    let status = client(&guard).echo(echo(Code::Ok)).await.unwrap_err();

    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    assert_eq!(*error.cause(), Cause::ForcedOpen);
    assert!(error.is_rejection());
    assert_eq!(server.calls(), 0);
}

#[tokio::test]
async fn a_full_bulkhead_refuses_with_unavailable() {
    let server = TestServer::start().await.unwrap();
    // One call at a time, and no wait for it.
    let guard = guard(
        &server,
        &format!("{ROOMY}max_connections = 1\nbulkhead_wait = 0\n"),
    );
    assert_eq!(guard.bulkhead_permits(), 1);
    let client = client(&guard);

    let mut first = client.clone();
    let running =
        tokio::spawn(async move { first.echo(slow_echo(Duration::from_millis(1500))).await });
    assert!(
        eventually(|| server.calls() == 1).await,
        "the first call never arrived"
    );

    let status = client.clone().echo(echo(Code::Ok)).await.unwrap_err();

    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let error = guard_error(&status)
        .unwrap_or_else(|| panic!("no guard error as the source of {status:?}"));
    assert!(
        matches!(error.cause(), Cause::BulkheadFull { .. }),
        "{error:?}"
    );
    assert_eq!(server.calls(), 1);
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn after_the_open_duration_a_trial_call_closes_the_breaker() {
    let server = TestServer::start().await.unwrap();
    // Open for a moment only; one trial decides.
    let keys = format!("{ROOMY}cb_open_duration = \"300ms\"\ncb_half_open_calls = 1\n");
    let guard = guard(&server, &keys);
    let mut client = client(&guard);
    for _ in 0..5 {
        client.echo(echo(Code::Unavailable)).await.unwrap_err();
    }
    assert_eq!(guard.breaker().snapshot().state, State::Open);

    tokio::time::sleep(Duration::from_millis(600)).await;
    let reply = client.echo(echo(Code::Ok)).await.unwrap().into_inner();

    assert_eq!(reply.message, "hello");
    assert_eq!(guard.breaker().snapshot().state, State::Closed);
    assert_eq!(server.calls(), 6);
}

#[tokio::test]
async fn concurrent_calls_share_the_channel_up_to_the_bulkhead() {
    let server = TestServer::start().await.unwrap();
    // The default max_connections: 8 calls at once; none of them slow.
    let guard = guard(&server, &format!("{ROOMY}cb_slow_threshold = \"4s\"\n"));
    assert_eq!(guard.bulkhead_permits(), 8);
    let client = client(&guard);

    let calls: Vec<_> = (0..8)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move { client.echo(slow_echo(Duration::from_secs(1))).await })
        })
        .collect();
    assert!(
        eventually(|| guard.in_flight() == 8).await,
        "never 8 in flight at once"
    );
    for call in calls {
        call.await.unwrap().unwrap();
    }

    assert_eq!(server.calls(), 8);
    assert_eq!(guard.in_flight(), 0);
    assert_eq!(guard.breaker().snapshot().failures, 0);
}

/// A real tonic server that answers `Unavailable` with `grpc-retry-pushback-ms: 120000`:
/// the breaker it opens stays open for the two minutes the server asked, and its own
/// refusals pass that on; an absurd pushback is capped by `cb_open_max`, a malformed one
/// is no hint (the plain `cb_open_duration`).
#[tokio::test]
async fn the_servers_pushback_keeps_the_breaker_open_as_long_as_it_asked() {
    let server = TestServer::start().await.unwrap();
    for (asked, open_for) in [
        ("120000", Duration::from_secs(120)),
        ("99999999999", Duration::from_secs(300)),
        ("-1", Duration::from_secs(30)),
    ] {
        let guard = guard(&server, ROOMY);
        let mut client = client(&guard);
        for _ in 0..5 {
            let mut request = tonic::Request::new(echo(Code::Unavailable));
            request
                .metadata_mut()
                .insert("x-pushback-ms", asked.parse().unwrap());
            let status = client.echo(request).await.unwrap_err();
            assert_eq!(status.code(), Code::Unavailable);
        }
        let snapshot = guard.breaker().snapshot();
        assert_eq!(snapshot.state, State::Open, "{asked}");
        assert_eq!(snapshot.open_for, Some(open_for), "{asked}");
        let refused = client.echo(echo(Code::Ok)).await.unwrap_err();
        let passed_on = pushback(&refused).expect("a pushback while open");
        assert!(
            passed_on <= open_for && passed_on + Duration::from_secs(5) > open_for,
            "{asked}: {passed_on:?}"
        );
    }
}
