#[derive(outbound_guard::Guarded)]
pub enum Adapter {
    Sber(outbound_guard::Guard),
}

fn main() {}
