// A system's settings are validated once, when they are loaded: they cannot be changed
// afterwards into values the breaker cannot work with (a window of 0 outcomes).
fn main() {
    let settings = outbound_guard::Settings::parse("[systems.sber]", "inline").unwrap();
    let mut sber = settings.system("sber").unwrap().clone();
    sber.cb_window_size = 0;
    let _ = outbound_guard::Guard::new(&sber);
}
