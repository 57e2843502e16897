//! The settings `tune` may try for one system: the keys a team may change and the
//! recording can judge, each over a few values around the settings it ran with, and a
//! setting made of them through the settings crate's own loader (so an invalid one is
//! never tried, and never proposed).

use std::collections::BTreeMap;
use std::time::Duration;

use outbound_guard_settings::{env_var, Key, Loader, Settings, SystemSettings};

use crate::recording::{Call, Recorded};

/// A setting as the keys changed from the settings the service ran with, each as the
/// file would write it: `cb_failure_rate = 0.6`.
pub(crate) type Change = BTreeMap<Key, String>;

/// Keys that change together, and the values they take together.
pub(crate) struct Group {
    pub keys: Vec<Key>,
    pub values: Vec<Vec<String>>,
}

/// What the recording says that decides which keys it can judge.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seen {
    /// Calls cut by the client's `read_timeout`, and by the guard's `total_timeout`.
    pub cut: usize,
    pub timed_out: usize,
    /// The most calls running at once.
    pub most_at_once: usize,
}

impl Seen {
    /// The keys to search around `base` and their values: the breaker's always; the
    /// timeouts, shorter only, where the recording has calls they cut; the bulkhead's
    /// size where the recording's calls filled it.
    pub(crate) fn groups(self, base: &SystemSettings) -> Vec<Group> {
        groups(base, self)
    }

    pub(crate) fn of(calls: &[Call]) -> Seen {
        // The most at once: starts and ends swept in time order (an end before a start
        // at the same microsecond).
        let mut edges: Vec<(u64, i8)> = calls
            .iter()
            .filter(|c| c.outcome != Recorded::Rejected)
            .flat_map(|c| [(c.start, 1), (c.start + u64::from(c.duration), -1)])
            .collect();
        edges.sort_unstable();
        let (mut now, mut most) = (0_i64, 0_i64);
        for (_, step) in edges {
            now += i64::from(step);
            most = most.max(now);
        }
        Seen {
            cut: calls.iter().filter(|c| c.outcome == Recorded::Cut).count(),
            timed_out: calls
                .iter()
                .filter(|c| c.outcome == Recorded::Timeout)
                .count(),
            most_at_once: usize::try_from(most).unwrap_or(0),
        }
    }
}

/// A duration as the file writes it: `300ms`, `5s`.
pub(crate) fn seconds(d: Duration) -> String {
    let ms = d.as_millis().max(1);
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// `base` times `factor`, to the millisecond.
fn scaled(base: Duration, factor: f64) -> Duration {
    Duration::from_millis((base.as_secs_f64() * factor * 1000.0).round().max(1.0) as u64)
}

/// The value of a searched `key` in `s`, as [`Group`]'s values write it.
pub(crate) fn text_of(s: &SystemSettings, key: Key) -> String {
    match key {
        Key::CbFailureRate => format!("{}", s.cb_failure_rate()),
        Key::CbWindowSize => s.cb_window_size().to_string(),
        Key::CbMinCalls => s.cb_min_calls().to_string(),
        Key::CbOpenDuration => seconds(s.cb_open_duration()),
        Key::CbHalfOpenCalls => s.cb_half_open_calls().to_string(),
        Key::CbSlowThreshold => seconds(s.cb_slow_threshold()),
        Key::ReadTimeout => seconds(s.read_timeout()),
        Key::TotalTimeout => seconds(s.total_timeout()),
        Key::MaxConnections => s.max_connections().to_string(),
        _ => String::new(),
    }
}

/// The keys to search around `base` and their values: the breaker's always; the
/// timeouts, shorter only, where the recording has calls they cut (a longer one the
/// recording cannot tell); the bulkhead's size where the recording's calls filled it.
pub(crate) fn groups(base: &SystemSettings, seen: Seen) -> Vec<Group> {
    let one = |key: Key, values: Vec<String>| Group {
        keys: vec![key],
        values: values.into_iter().map(|v| vec![v]).collect(),
    };
    let durations = |d: Duration, factors: &[f64]| -> Vec<String> {
        factors.iter().map(|f| seconds(scaled(d, *f))).collect()
    };
    let mut groups = vec![
        one(
            Key::CbFailureRate,
            (1..=10)
                .map(|i| format!("{}", f64::from(i) / 10.0))
                .collect(),
        ),
        window(base),
        one(
            Key::CbOpenDuration,
            durations(
                base.cb_open_duration(),
                &[1.0 / 6.0, 1.0 / 3.0, 0.5, 2.0, 4.0],
            ),
        ),
        one(
            Key::CbHalfOpenCalls,
            [1, 2, 3, 5, 10].iter().map(u32::to_string).collect(),
        ),
    ];
    // Around the guide's `read_timeout / 2`: a threshold fitted to how fast this
    // recording's healthy calls were would call a slower day an outage.
    groups.push(one(
        Key::CbSlowThreshold,
        durations(base.read_timeout(), &[0.25, 0.5, 0.75]),
    ));
    if seen.cut > 0 {
        groups.push(one(
            Key::ReadTimeout,
            durations(base.read_timeout(), &[0.25, 0.5, 0.75]),
        ));
    }
    if seen.timed_out > 0 {
        groups.push(one(
            Key::TotalTimeout,
            durations(base.total_timeout(), &[0.5, 0.75]),
        ));
    }
    if seen.most_at_once >= base.bulkhead_permits() {
        let n = base.max_connections();
        groups.push(one(
            Key::MaxConnections,
            [n / 2, n * 2, n * 4]
                .iter()
                .filter(|v| **v >= 1)
                .map(u32::to_string)
                .collect(),
        ));
    }
    groups
}

/// The window and the calls it needs, scaled together around `base`'s, and each alone.
fn window(base: &SystemSettings) -> Group {
    let (w, m) = (base.cb_window_size(), base.cb_min_calls());
    let scale = |n: u32, f: f64| ((f64::from(n) * f).round() as u32).clamp(1, 10_000);
    let mut values = Vec::new();
    for f in [0.2, 0.4, 2.0, 4.0] {
        let w2 = scale(w, f);
        values.push((w2, scale(m, f).min(w2)));
    }
    values.push((w, scale(m, 0.5)));
    values.push((w, scale(m, 2.0).min(w)));
    values.dedup();
    Group {
        keys: vec![Key::CbWindowSize, Key::CbMinCalls],
        values: values
            .into_iter()
            .filter(|v| *v != (w, m))
            .map(|(w, m)| vec![w.to_string(), m.to_string()])
            .collect(),
    }
}

/// The settings file's text with `--env`'s overrides, from which every setting tried
/// is made.
pub(crate) struct Base<'a> {
    pub text: &'a str,
    pub origin: &'a str,
    pub vars: &'a [(String, String)],
}

impl Base<'_> {
    /// The settings with `change` made to `system`, through the same overrides and
    /// validation as `CLIENT_<SYSTEM>__<KEY>` at startup: `None` where they are not
    /// valid.
    pub(crate) fn with(&self, system: &str, change: &Change) -> Option<Settings> {
        let mut vars: Vec<(String, String)> = self
            .vars
            .iter()
            .filter(|(name, _)| !change.keys().any(|k| env_var(system, *k) == *name))
            .cloned()
            .collect();
        vars.extend(change.iter().map(|(k, v)| (env_var(system, *k), v.clone())));
        Loader::new().env(vars).parse(self.text, self.origin).ok()
    }
}

/// `change` in words: `cb_failure_rate=0.6, cb_open_duration=5s`; `as set` if empty.
pub(crate) fn label(change: &Change) -> String {
    if change.is_empty() {
        return "as set".to_owned();
    }
    change
        .iter()
        .map(|(k, v)| format!("{}={v}", k.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "[systems.sber]\ncb_failure_rate = 0.3\nconnect_timeout = \"0.5s\"\nread_timeout = \"1s\"\ntotal_timeout = \"2s\"\n";

    fn base_settings() -> SystemSettings {
        Settings::parse(FILE, "resilience.toml")
            .unwrap()
            .system("sber")
            .unwrap()
            .clone()
    }

    #[test]
    fn every_value_searched_loads_and_changes_the_setting() {
        let base = base_settings();
        let seen = Seen {
            cut: 1,
            timed_out: 1,
            most_at_once: 100,
        };
        let from = Base {
            text: FILE,
            origin: "resilience.toml",
            vars: &[],
        };
        let groups = groups(&base, seen);
        assert_eq!(groups.len(), 8, "the bulkhead and both timeouts are judged");
        for group in &groups {
            for values in &group.values {
                let change: Change = group.keys.iter().copied().zip(values.clone()).collect();
                let Some(settings) = from.with("sber", &change) else {
                    // Only the ones the settings crate refuses are left out.
                    assert!(Loader::new()
                        .env(change.iter().map(|(k, v)| (env_var("sber", *k), v.clone())))
                        .parse(FILE, "resilience.toml")
                        .is_err());
                    continue;
                };
                let s = settings.system("sber").unwrap();
                let restates = change.iter().all(|(k, v)| text_of(&base, *k) == *v);
                assert_eq!(*s == base, restates, "{change:?}");
                for (key, value) in &change {
                    assert_eq!(text_of(s, *key), *value, "{change:?}");
                }
            }
        }
    }

    #[test]
    fn keys_the_recording_cannot_judge_are_not_searched() {
        let keys: Vec<Key> = groups(&base_settings(), Seen::default())
            .iter()
            .flat_map(|g| g.keys.clone())
            .collect();
        assert!(!keys.contains(&Key::ReadTimeout));
        assert!(!keys.contains(&Key::TotalTimeout));
        assert!(!keys.contains(&Key::MaxConnections));
        assert!(keys.contains(&Key::CbFailureRate));
    }

    #[test]
    fn durations_read_as_the_file_writes_them() {
        assert_eq!(seconds(Duration::from_millis(300)), "300ms");
        assert_eq!(seconds(Duration::from_secs(5)), "5s");
        assert_eq!(seconds(Duration::from_micros(10)), "1ms");
        assert_eq!(label(&Change::new()), "as set");
    }
}
