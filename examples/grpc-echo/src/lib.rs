//! A tonic client guarded by outbound-guard's gRPC layer, and the server it talks to:
//! the echo service of `proto/echo.proto`, generated at build time without a system
//! `protoc`, and [`TestServer`], a tonic server on a free port of 127.0.0.1 whose every
//! answer the request decides (a code, a delay, a stream's length and end).
//!
//! `cargo run -p grpc-echo-example` shows a breaker opening on a burst of
//! `Unavailable` answers; the tests in `tests/` drive the layer through every case
//! over loopback.

/// The messages, client and server generated from `proto/echo.proto`.
#[allow(clippy::pedantic, missing_docs)]
pub mod pb {
    tonic::include_proto!("echo");
}

pub mod server;

pub use server::{parse_grpc_timeout, TestServer};
