#[derive(outbound_guard::Guarded)]
pub struct Adapter {
    sber: outbound_guard::Guard,
    customer: outbound_guard::Guard,
}

fn main() {}
