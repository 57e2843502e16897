use resilience::Guarded;

#[derive(Guarded)]
#[guarded(system = "sbr")]
pub struct Adapter {
    guard: resilience::Guard,
}

fn main() {}
