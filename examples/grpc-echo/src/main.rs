//! The demo: a tonic client guarded by the gRPC layer, against an echo server that
//! answers `Unavailable`. The first calls reach the server and count; once the breaker
//! opens, calls are refused without reaching it, as a `Status` a gRPC client
//! understands: `Unavailable`, with the time until trial calls as
//! `grpc-retry-pushback-ms`.

use std::error::Error;

use grpc_echo_example::pb::echo_client::EchoClient;
use grpc_echo_example::pb::EchoRequest;
use grpc_echo_example::TestServer;
use outbound_guard::{CircuitBreakerError, Guard, Settings};
use outbound_guard_tonic::GrpcGuardLayer;
use tonic::Code;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let server = TestServer::start().await?;
    println!("echo server on {}", server.url());

    // resilience.toml, with base_url pointed at the server just started.
    let settings = Settings::load_with_env(
        include_str!("../resilience.toml"),
        "resilience.toml",
        [("CLIENT_ECHO__BASE_URL", server.url())],
    )?;
    let echo = settings
        .system("echo")
        .ok_or("resilience.toml has no [systems.echo]")?;
    let guard = Guard::new(echo);

    // The whole wiring: an endpoint from the settings, the channel in the guard's layer.
    let channel = outbound_guard_tonic::endpoint(echo)?.connect_lazy();
    let mut client = EchoClient::new(
        tower::ServiceBuilder::new()
            .layer(GrpcGuardLayer::new(guard.clone()))
            .service(channel),
    );

    for i in 1..=6 {
        let request = EchoRequest {
            message: format!("call {i}"),
            code: Code::Unavailable as i32,
            delay_ms: 0,
        };
        let status = match client.echo(request).await {
            Ok(reply) => {
                println!("call {i}: unexpected answer {:?}", reply.into_inner());
                continue;
            }
            Err(status) => status,
        };
        let snapshot = guard.breaker().snapshot();
        let refused = std::error::Error::source(&status)
            .and_then(|source| source.downcast_ref::<CircuitBreakerError>());
        match refused {
            None => println!(
                "call {i}: the server answered {:?} ({}); breaker {:?}, {} of {} calls failed",
                status.code(),
                status.message(),
                snapshot.state,
                snapshot.failures,
                snapshot.calls,
            ),
            Some(error) => println!(
                "call {i}: refused by the guard as {:?}, grpc-retry-pushback-ms = {}: {error}",
                status.code(),
                status
                    .metadata()
                    .get("grpc-retry-pushback-ms")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("none"),
            ),
        }
    }
    println!(
        "the server saw {} calls; the breaker is {:?}",
        server.calls(),
        guard.breaker().snapshot().state
    );
    Ok(())
}
