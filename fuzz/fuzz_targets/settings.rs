//! Fuzzes the settings parser and the environment-override parser for panics.
//!
//! The input, read as UTF-8 (lossily), is split at the first NUL: before it, the
//! settings file; after it, one environment pair per line, `NAME=VALUE`. Every input must
//! give `Ok`, or an error whose message is non-empty and says where the problem is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use outbound_guard_settings::Settings;

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let (text, env) = input.split_once('\0').unwrap_or((&input, ""));
    let pairs: Vec<(String, String)> = env
        .lines()
        .map(|line| {
            let (name, value) = line.split_once('=').unwrap_or((line, ""));
            (name.to_owned(), value.to_owned())
        })
        .collect();
    match Settings::load_with_env(text, "fuzz.toml", pairs) {
        Ok(settings) => {
            for s in settings.systems() {
                assert!(s.connect_timeout() < s.read_timeout() && s.read_timeout() < s.total_timeout());
                assert!(s.cb_slow_threshold() < s.total_timeout());
                assert!(1 <= s.cb_min_calls() && s.cb_min_calls() <= s.cb_window_size());
                assert!(s.cb_failure_rate() > 0.0 && s.cb_failure_rate() <= 1.0);
            }
        }
        Err(error) => {
            assert!(!error.message().is_empty());
            let shown = error.to_string();
            assert!(shown.starts_with("fuzz.toml: ") || shown.starts_with("environment variable `"));
        }
    }
});
