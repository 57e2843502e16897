//! Rebuild the service when its `resilience.toml` changes, tracked here rather than by an
//! `include_bytes!` in the attribute's expansion, which `cargo expand` would show.

// build.rs, with `outbound-guard-settings` under [build-dependencies]
fn main() {
    outbound_guard_settings::build::track();
}
