//! The ways `docs/adapters.md` builds an adapter whose type declares its system:
//! `guards.try_adapter(SberAdapter::new)` (a fallible constructor), `guards.adapter(|guard|
//! …)` and `adapter.wired()`; each refuses another system's guard.
use std::error::Error;

use outbound_guard::{Guard, Guards, Settings, SystemAdapter};

#[derive(outbound_guard::Guarded)]
#[guarded(system = "sber")]
pub struct SberAdapter {
    guard: Guard,
}

impl SberAdapter {
    pub fn new(guard: Guard) -> Result<Self, Box<dyn Error>> {
        Ok(SberAdapter { guard })
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let settings = Settings::parse("[systems.sber]\n[systems.customer]", "inline")?;
    let guards = Guards::new(&settings);
    let built = guards.try_adapter(SberAdapter::new)?;
    assert_eq!(built.guard.system(), "sber");
    let built = guards.adapter(|guard| SberAdapter { guard })?;
    assert_eq!(built.guard.system(), "sber");
    let wired = SberAdapter { guard: guards.get("sber")? }.wired()?;
    assert_eq!(wired.guard.system(), "sber");
    let wrong = SberAdapter { guard: guards.get("customer")? }.wired();
    assert!(wrong.is_err());
    Ok(())
}
