#[derive(resilience::Guarded)]
pub struct Adapter {
    http: String,
}

fn main() {}
