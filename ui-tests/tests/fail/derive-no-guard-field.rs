#[derive(outbound_guard::Guarded)]
pub struct Adapter {
    http: String,
}

fn main() {}
