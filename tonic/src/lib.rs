//! A tonic client's calls run through a system's [`Guard`](outbound_guard::Guard), with
//! gRPC's own rules for what counts, how a refusal is said and whose deadline ends a
//! call; and each system's tonic `Endpoint` built from its settings. The gRPC
//! integration of [`outbound-guard`](outbound_guard).
//!
//! [`GrpcGuardLayer`] wraps the channel. Each call is one
//! [`GuardedCall`](outbound_guard::GuardedCall), the attribute's, whose documentation
//! tells its steps. Which calls count is
//! [`TransientGrpc`]: `Unavailable`, `DeadlineExceeded`, `ResourceExhausted`, `Internal`,
//! `Unknown` and transport errors count, the codes about the request
//! (`InvalidArgument`, `NotFound`, …) do not; the status is read from the headers (a
//! trailers-only answer) or from the trailers, so the guard covers the **whole call**,
//! until its body ends (a server stream included; [`GrpcGuardLayer::until_headers`] for
//! streams that outlive `total_timeout`). A refusal reaches the client as
//! `Status::unavailable` (with `grpc-retry-pushback-ms` while open), a call cut at
//! `total_timeout` as `DeadlineExceeded`, each with the
//! [`CircuitBreakerError`](outbound_guard::CircuitBreakerError) as its `source`. The
//! call's deadline is the earlier of `total_timeout` and the request's `grpc-timeout`,
//! and the budget left is sent on as `grpc-timeout`, so the server stops in time; a call
//! ended by the caller's own deadline does not count against the system. A failing
//! answer's `grpc-retry-pushback-ms` (in the headers or the trailers; a proxy's
//! `Retry-After` on a 429 or 503) is the upstream's retry hint: an opening it causes or
//! joins lasts at least that long, capped by `cb_open_max` ([`retry_pushback`]).
//!
//! [`endpoint`] builds the channel's `Endpoint` from the system's `base_url` and
//! `connect_timeout`; what each settings key means for tonic, hyper and reqwest: the
//! table in [`outbound_guard::settings`](mod@outbound_guard::settings).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use outbound_guard::{Guard, Settings};
//! use outbound_guard_tonic::{endpoint, GrpcGuardLayer};
//! use tower::{Layer, ServiceExt};
//!
//! let settings = Settings::parse(
//!     "[systems.fiscal]\nbase_url = \"http://127.0.0.1:50051\"",
//!     "inline",
//! )?;
//! let fiscal = settings.system("fiscal").expect("compiled against `fiscal`");
//! let guard = Guard::new(fiscal);
//! // Connected on its first call; a generated client takes the guarded channel:
//! // `FiscalClient::new(guarded)`.
//! let channel = endpoint(fiscal)?.connect_lazy();
//! let guarded = GrpcGuardLayer::new(guard.clone()).layer(channel);
//!
//! // An open breaker refuses the call before it reaches the channel.
//! guard.breaker().act(outbound_guard::ManualAction::ForceOpen);
//! let request = http::Request::post("http://127.0.0.1:50051/fiscal.v1.Fiscal/Register")
//!     .body(tonic::body::Body::empty())?;
//! let refused = guarded.oneshot(request).await.unwrap_err();
//! assert_eq!(refused.code(), tonic::Code::Unavailable);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod body;
mod classify;
mod deadline;
mod endpoint;
mod layer;
mod pushback;
mod status;
mod timeout;

pub use self::body::GrpcBody;
pub use self::classify::TransientGrpc;
pub use self::endpoint::{endpoint, EndpointError};
pub use self::layer::{GrpcGuardLayer, GrpcGuardService, GrpcResponseFuture};
pub use self::pushback::retry_pushback;
