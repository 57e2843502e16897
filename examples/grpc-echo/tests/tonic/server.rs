//! The test server itself, through a bare channel: each answer as the request asked,
//! so the other tests can rely on it.

use std::time::Duration;

use grpc_echo_example::pb::echo_client::EchoClient;
use grpc_echo_example::pb::CountRequest;
use grpc_echo_example::TestServer;
use tonic::transport::Endpoint;
use tonic::{Code, Request};

use super::{count, echo, slow_echo};

fn bare_client(server: &TestServer) -> EchoClient<tonic::transport::Channel> {
    let channel = Endpoint::from_shared(server.url()).unwrap().connect_lazy();
    EchoClient::new(channel)
}

#[tokio::test]
async fn the_server_answers_as_asked() {
    let server = TestServer::start().await.unwrap();
    let mut client = bare_client(&server);

    let reply = client.echo(echo(Code::Ok)).await.unwrap().into_inner();
    assert_eq!((reply.message.as_str(), reply.call), ("hello", 1));
    assert_eq!(reply.grpc_timeout, "", "no deadline, no header");
    let status = client.echo(echo(Code::Unavailable)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);

    let mut request = Request::new(slow_echo(Duration::from_millis(10)));
    request.set_timeout(Duration::from_secs(2));
    let reply = client.echo(request).await.unwrap().into_inner();
    assert_eq!(reply.grpc_timeout, "2000000u", "tonic writes microseconds");
    assert_eq!(server.last_grpc_timeout(), Some(Duration::from_secs(2)));

    assert_eq!(server.calls(), 3);
}

#[tokio::test]
async fn the_server_streams_as_asked() {
    let server = TestServer::start().await.unwrap();
    let mut client = bare_client(&server);

    let mut stream = client
        .count(count(3, Duration::from_millis(5), Code::Unavailable))
        .await
        .unwrap()
        .into_inner();
    for i in 1..=3 {
        assert_eq!(stream.message().await.unwrap().unwrap().i, i);
    }
    assert_eq!(
        stream.message().await.unwrap_err().code(),
        Code::Unavailable
    );

    let refuse = CountRequest {
        code: Code::NotFound as i32,
        ..CountRequest::default()
    };
    assert_eq!(
        client.count(refuse).await.unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(server.calls(), 2);
}
