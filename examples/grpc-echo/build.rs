//! Generates the echo service's messages, client and server from `proto/echo.proto`
//! without a `protoc` on the machine: protox (a protobuf compiler in Rust) parses the
//! file into a descriptor set, which tonic-prost-build turns into code.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/echo.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        // The client is built on a guarded `Channel`, never by the generated `connect`.
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}
