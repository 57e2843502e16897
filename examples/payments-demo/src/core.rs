//! The service's core: the domain, the ports it needs from the outside world, and the
//! use cases. Nothing here knows about HTTP, reqwest or the breaker; it only sees the
//! ports' errors, among them `SystemUnavailable`.

pub mod domain;
pub mod orders;
pub mod ports;
