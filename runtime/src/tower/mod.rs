//! tower [`Layer`](tower_layer::Layer)s that run every call of a client service
//! through a system's [`Guard`](crate::Guard) (feature `tower`): for adapters that
//! wrap a generated or general client (tonic, hyper, `reqwest::Client`), guarded
//! without an attribute on each call.
//!
//! The outcome rules are the attribute's: bulkhead, breaker, total timeout, elapsed
//! check. Which answers count is the protocol's:
//!
//! - **HTTP** (hyper, reqwest): [`GuardLayer`] with [`TransientHttp`] — transport
//!   errors and timeouts, 5xx, 408 and 429 count; other answers (a 404, a 422) are the
//!   system working. The guard covers the call until the response headers; a refusal
//!   is [`GuardedError::Guard`], whose message says why and for how long
//!   ([`CircuitBreakerError::retry_after`](crate::CircuitBreakerError::retry_after)).
//!   Read the body inside the guarded call (or through an adapter's
//!   `#[circuit_breaker]` method) when its time should count too.
//! - **gRPC** (tonic, feature `tonic`): [`GrpcGuardLayer`], with [`TransientGrpc`] —
//!   `Unavailable`, `DeadlineExceeded`, `ResourceExhausted`, `Internal`, `Unknown` and
//!   transport errors count, the codes about the request (`InvalidArgument`,
//!   `NotFound`, …) do not; the status is read from the headers (a trailers-only
//!   answer) or from the trailers, so the guard covers the **whole call**, until its
//!   body ends (a server stream included; [`GrpcGuardLayer::until_headers`] for streams
//!   that outlive `total_timeout`). A refusal reaches the client as
//!   `Status::unavailable` (with `grpc-retry-pushback-ms` while open), a call cut at
//!   `total_timeout` as `DeadlineExceeded`, each with the
//!   [`CircuitBreakerError`](crate::CircuitBreakerError) as its `source`. The call's
//!   deadline is the earlier of `total_timeout` and the request's `grpc-timeout`, and
//!   the budget left is sent on as `grpc-timeout`, so the server stops in time; a call
//!   ended by the caller's own deadline does not count against the system.
//! - **Anything else**: [`GuardLayer`] with every `Err` counting ([`EveryError`]), or
//!   a [`Classify`] of the service's own over the whole `Result`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use outbound_guard::tower::{GuardLayer, GuardedError};
//! use outbound_guard::{Guard, Settings};
//! use tower::{service_fn, Layer, Service, ServiceExt};
//!
//! let settings = Settings::parse("[systems.sber]", "inline").unwrap();
//! let guard = Guard::new(settings.system("sber").unwrap());
//! let layer = GuardLayer::new(guard.clone())
//!     // A status of 500 or more counts against the breaker; the rest is an answer.
//!     .failure_if(|result: &Result<u16, std::io::Error>| matches!(result, Ok(s) if *s >= 500) || result.is_err());
//! let mut client = layer.layer(service_fn(|status: u16| async move { Ok::<_, std::io::Error>(status) }));
//!
//! let status = client.ready().await.unwrap().call(503).await.unwrap();
//! assert_eq!(status, 503); // returned as it came...
//! assert_eq!(guard.breaker().snapshot().failures, 1); // ...and counted as a failure
//!
//! guard.breaker().force_open();
//! let refused = client.ready().await.unwrap().call(200).await.unwrap_err();
//! assert!(matches!(refused, GuardedError::Guard(_)));
//! # }
//! ```

#[cfg(feature = "tonic")]
mod grpc;
#[cfg(feature = "tonic")]
mod grpc_body;
#[cfg(feature = "tonic")]
mod grpc_exchange;
#[cfg(feature = "tonic")]
mod grpc_status;
#[cfg(feature = "tonic")]
mod grpc_timeout;
mod layer;
mod transient;

#[cfg(feature = "tonic")]
pub use self::grpc::{GrpcGuardLayer, GrpcGuardService, GrpcResponseFuture};
#[cfg(feature = "tonic")]
pub use self::grpc_body::GrpcBody;
pub use self::layer::{Classify, EveryError, GuardFuture, GuardLayer, GuardService, GuardedError};
#[cfg(feature = "tonic")]
pub use self::transient::TransientGrpc;
pub use self::transient::TransientHttp;
