use outbound_guard::Guarded;

#[derive(Guarded)]
#[guarded(system = "sbr")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

fn main() {}
