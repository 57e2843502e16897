// One mistake, one error: the derive's fallback impls keep the adapter's wiring from
// reporting `SystemAdapter` and `Guarded` as missing too.
use outbound_guard::{Guarded, Guards, Settings};

#[derive(Guarded)]
#[guarded(system = "default")]
pub struct Adapter {
    guard: outbound_guard::Guard,
}

fn main() {
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let _ = Guards::new(&settings).adapter(|guard| Adapter { guard });
}
