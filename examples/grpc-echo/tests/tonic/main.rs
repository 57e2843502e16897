//! The gRPC layer in front of a real tonic client and server over loopback: which
//! answers count (status in headers or in trailers), how a refusal reaches the caller,
//! how the deadlines of the guard, the caller and the server agree, and what the guard
//! covers of a server stream.
//!
//! Real time and real sockets (tonic needs real IO): the durations are short and the
//! margins wide, so the suite holds on a loaded machine; nothing asserts speed.

mod classify;
mod deadlines;
mod proxy;
mod refusal;
mod server;
mod streaming;

use std::fmt::Write as _;
use std::time::Duration;

use grpc_echo_example::pb::echo_client::EchoClient;
use grpc_echo_example::pb::{CountReply, CountRequest, EchoRequest};
use grpc_echo_example::TestServer;
use outbound_guard::{CircuitBreakerError, Guard, Settings};
use outbound_guard_tonic::{GrpcGuardLayer, GrpcGuardService};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tower::Layer;
use tower_http::classify::ClassifyResponse;

/// Every test's breaker: judged on the last 10 calls from the 5th, open at half of them
/// failed, and open for longer than any test runs.
const BREAKER: &str = "\
cb_window_size = 10
cb_min_calls = 5
cb_failure_rate = 0.5
cb_open_duration = \"30s\"
";

/// Timeouts that cut nothing here, even on a loaded machine.
const ROOMY: &str = "\
connect_timeout = \"1s\"
read_timeout = \"2s\"
total_timeout = \"5s\"
";

/// A guard of `[systems.echo]` pointed at `url`: [`BREAKER`] and the test's `keys`,
/// which win over [`BREAKER`]'s.
fn guard_at(url: &str, keys: &str) -> Guard {
    let key = |line: &str| line.split('=').next().unwrap_or_default().trim().to_owned();
    let given: Vec<String> = keys.lines().map(key).collect();
    let breaker = BREAKER
        .lines()
        .filter(|line| !given.contains(&key(line)))
        .fold(String::new(), |mut breaker, line| {
            let _ = writeln!(breaker, "{line}");
            breaker
        });
    let text = format!("[systems.echo]\nbase_url = \"{url}\"\n{breaker}{keys}");
    let settings = Settings::parse(&text, "the test's resilience.toml").unwrap();
    Guard::new(settings.system("echo").unwrap())
}

/// A guard of `[systems.echo]` pointed at `server`; see [`guard_at`].
fn guard(server: &TestServer, keys: &str) -> Guard {
    guard_at(&server.url(), keys)
}

/// The channel to the guard's system, from its settings.
fn channel(guard: &Guard) -> Channel {
    outbound_guard_tonic::endpoint(&guard.settings())
        .unwrap()
        .connect_lazy()
}

/// A generated client whose calls go through `layer`.
fn client_with<C>(
    guard: &Guard,
    layer: GrpcGuardLayer<C>,
) -> EchoClient<GrpcGuardService<Channel, C>>
where
    C: ClassifyResponse + Clone + Send + 'static,
    C::ClassifyEos: Send,
{
    EchoClient::new(layer.layer(channel(guard)))
}

/// A generated client whose calls go through the guard, classified by default.
fn client(guard: &Guard) -> EchoClient<GrpcGuardService<Channel>> {
    client_with(guard, GrpcGuardLayer::new(guard.clone()))
}

/// An echo answered with `code` (OK: the message back) at once.
fn echo(code: Code) -> EchoRequest {
    EchoRequest {
        message: "hello".into(),
        code: code as i32,
        delay_ms: 0,
    }
}

/// An echo answered OK after `delay`.
fn slow_echo(delay: Duration) -> EchoRequest {
    EchoRequest {
        message: "hello".into(),
        code: 0,
        delay_ms: u32::try_from(delay.as_millis()).unwrap(),
    }
}

/// A stream of `n` replies `interval` apart, ending with `end`.
fn count(n: u32, interval: Duration, end: Code) -> CountRequest {
    CountRequest {
        n,
        interval_ms: u32::try_from(interval.as_millis()).unwrap(),
        end_code: end as i32,
        code: 0,
    }
}

/// A server stream of `n` replies `interval` apart, ending with `end`, opened through
/// the guarded `client`: its headers came.
async fn stream(
    client: &mut EchoClient<GrpcGuardService<Channel>>,
    n: u32,
    interval: Duration,
    end: Code,
) -> tonic::Streaming<CountReply> {
    client
        .count(count(n, interval, end))
        .await
        .unwrap()
        .into_inner()
}

/// The guard's own error behind a status, when the guard refused or cut the call.
fn guard_error(status: &Status) -> Option<&CircuitBreakerError> {
    std::error::Error::source(status)?.downcast_ref::<CircuitBreakerError>()
}

/// The `grpc-retry-pushback-ms` a status carries.
fn pushback(status: &Status) -> Option<Duration> {
    let value = status.metadata().get("grpc-retry-pushback-ms")?;
    Some(Duration::from_millis(value.to_str().ok()?.parse().ok()?))
}

/// Waits up to 5 s for `condition`, for what a server or a spawned call does on its own
/// time; false if it never held.
async fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}
