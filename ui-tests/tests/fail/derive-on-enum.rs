#[derive(resilience::Guarded)]
pub enum Adapter {
    Sber(resilience::Guard),
}

fn main() {}
