//! The runtime's breaker core, compiled as is. `state.rs` reaches the ring through
//! `super::window`, and `delivery.rs` the core through `super::state`, so they live in
//! this module as they do in `runtime/src/breaker/`.
//! (Paths of `#[path]` in a file module are relative to this file's directory.)

#[path = "../../runtime/src/breaker/window.rs"]
pub(crate) mod window;

#[path = "../../runtime/src/breaker/state.rs"]
pub(crate) mod state;

#[path = "../../runtime/src/breaker/delivery.rs"]
pub(crate) mod delivery;
