//! The adapters: the inbound HTTP API ([`http`]) and the outbound adapters that
//! implement the core's ports ([`out`]).

pub mod http;
pub mod out;
