#[derive(outbound_guard::Guarded)]
#[guarded(system = "sbr")]
pub struct SberAdapter {
    guard: outbound_guard::Guard,
}

fn main() {}
