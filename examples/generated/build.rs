//! Generates the customer system's client from `spec/customers.json` into `OUT_DIR`
//! at every build: the generated code is never edited nor committed.
//!
//! The client is generated with `HooksMode::Expected`, so the crate must give it its
//! `ClientHooks` (the `post` hook that keeps a 5xx's status): forgetting it is a
//! compile error, not a breaker that silently stays closed.

use std::path::Path;

fn main() {
    let spec_path = "spec/customers.json";
    println!("cargo::rerun-if-changed={spec_path}");
    let text = std::fs::read_to_string(spec_path).expect("the spec is in the example");
    let spec: openapiv3::OpenAPI = serde_json::from_str(&text).expect("the spec is OpenAPI 3.0");
    let mut settings = progenitor::GenerationSettings::new();
    settings.with_hooks(progenitor::HooksMode::Expected);
    let mut generator = progenitor::Generator::new(&settings);
    let tokens = generator
        .generate_tokens(&spec)
        .expect("progenitor generates the client");
    let file: syn::File = syn::parse2(tokens).expect("the generated client parses");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("client.rs");
    std::fs::write(out, prettyplease::unparse(&file)).expect("OUT_DIR is writable");
}
