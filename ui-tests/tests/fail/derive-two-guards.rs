#[derive(resilience::Guarded)]
pub struct Adapter {
    sber: resilience::Guard,
    customer: resilience::Guard,
}

fn main() {}
