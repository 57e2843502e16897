//! A tower [`Layer`](tower_layer::Layer) that runs every call of a client service
//! through a system's [`Guard`](outbound_guard::Guard): for adapters that wrap a
//! generated or general client (hyper, `reqwest::Client`, any `tower::Service`), guarded
//! without an attribute on each call. The tower integration of
//! [`outbound-guard`](outbound_guard); gRPC clients have their own layer, in
//! `outbound-guard-tonic`.
//!
//! Each call is one [`GuardedCall`](outbound_guard::GuardedCall), the attribute's, whose
//! documentation tells its steps. Which answers count is the protocol's:
//!
//! - **HTTP** (hyper, reqwest): [`GuardLayer`] with [`TransientHttp`] — transport
//!   errors and timeouts, 5xx, 408 and 429 count; other answers (a 404, a 422) are the
//!   system working. The guard covers the call until the response headers; a refusal
//!   is [`GuardedError::Guard`], whose message says why and for how long
//!   ([`CircuitBreakerError::retry_after`](outbound_guard::CircuitBreakerError::retry_after)).
//!   Read the body inside the guarded call (or through an adapter's
//!   `#[circuit_breaker]` method) when its time should count too.
//! - **gRPC** (tonic): `outbound_guard_tonic::GrpcGuardLayer` (crate
//!   `outbound-guard-tonic`), which reads each call's status from its headers or
//!   trailers and guards the whole call, a stream included. [`GuardLayer`] with
//!   [`TransientHttp`] over a gRPC channel would count none of gRPC's errors (they
//!   arrive as HTTP 200): it logs a `tracing` warning, once per layer, the first time it
//!   sees a `content-type: application/grpc` answer.
//! - **Anything else**: [`GuardLayer`] with every `Err` counting ([`EveryError`]), or
//!   a [`Classify`] of the service's own over the whole `Result`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use outbound_guard::{Guard, Settings};
//! use outbound_guard_tower::{GuardLayer, GuardedError};
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
//! guard.breaker().act(outbound_guard::ManualAction::ForceOpen);
//! let refused = client.ready().await.unwrap().call(200).await.unwrap_err();
//! assert!(matches!(refused, GuardedError::Guard(_)));
//! # }
//! ```

//!
//! hyper's client from a system's settings: the [`hyper_client`] module. `reqwest::Client`
//! is classified by [`TransientHttp`] with this crate's feature `reqwest`. What each
//! settings key means for each kind of client: the table in
//! [`outbound_guard::settings`](mod@outbound_guard::settings).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod classify;
mod grpc_notice;
pub mod hyper_client;
mod layer;

pub use self::classify::TransientHttp;
pub use self::layer::{Classify, EveryError, GuardFuture, GuardLayer, GuardService, GuardedError};
