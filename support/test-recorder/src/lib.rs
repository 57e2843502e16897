//! A `metrics::Recorder` for tests that keeps every series' current value and every
//! metric's description. The values live in `metrics-util`'s atomic `Registry`; its
//! `DebuggingRecorder` does not fit, as its snapshots reset counters and gauges and
//! these tests read a gauge more than once. A dev-dependency of `outbound-guard`: its
//! unit tests (`metrics/tests.rs`, `reload.rs`) and `tests/metrics.rs`, `tests/secrets.rs`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};

/// `name{label="value",…}` with labels sorted: one series.
pub type Series = String;

/// The recorder: install it (`metrics::set_global_recorder`, or
/// `metrics::with_local_recorder` for one test) and read the series back by name.
pub struct TestRecorder {
    registry: Registry<Key, AtomicStorage>,
    descriptions: Mutex<BTreeMap<String, (Option<Unit>, String)>>,
}

/// `name{a="1",b="2"}`, labels sorted by key.
pub fn series(key: &Key) -> Series {
    let mut labels: Vec<_> = key
        .labels()
        .map(|l| (l.key().to_owned(), l.value().to_owned()))
        .collect();
    labels.sort();
    let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

/// The handle of `wanted` among `handles`.
fn find<H>(handles: impl IntoIterator<Item = (Key, H)>, wanted: &str) -> Option<H> {
    handles
        .into_iter()
        .find_map(|(key, handle)| (series(&key) == wanted).then_some(handle))
}

impl TestRecorder {
    /// An empty recorder, shared: the test keeps one handle, `metrics` the other.
    pub fn new() -> Arc<TestRecorder> {
        Arc::new(TestRecorder {
            registry: Registry::atomic(),
            descriptions: Mutex::default(),
        })
    }

    /// The counter's value; `None` if it was never registered.
    pub fn counter(&self, series: &str) -> Option<u64> {
        find(self.registry.get_counter_handles(), series).map(|c| c.load(Ordering::Relaxed))
    }

    /// The gauge's value; `None` if it was never registered.
    pub fn gauge(&self, series: &str) -> Option<f64> {
        find(self.registry.get_gauge_handles(), series)
            .map(|g| f64::from_bits(g.load(Ordering::Relaxed)))
    }

    /// The histogram's samples; `None` if it was never registered.
    pub fn histogram(&self, series: &str) -> Option<Vec<f64>> {
        find(self.registry.get_histogram_handles(), series).map(|h| h.data())
    }

    /// Every registered series of every kind, sorted.
    pub fn all_series(&self) -> Vec<Series> {
        let mut all: Vec<Series> = self
            .registry
            .get_counter_handles()
            .keys()
            .chain(self.registry.get_gauge_handles().keys())
            .chain(self.registry.get_histogram_handles().keys())
            .map(series)
            .collect();
        all.sort();
        all
    }

    /// A metric's unit and description.
    pub fn description(&self, name: &str) -> Option<(Option<Unit>, String)> {
        self.descriptions().get(name).cloned()
    }

    /// The descriptions, whether or not a test panicked while holding them.
    fn descriptions(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (Option<Unit>, String)>> {
        self.descriptions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn describe(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.descriptions()
            .insert(key.as_str().to_owned(), (unit, description.into_owned()));
    }
}

impl Recorder for TestRecorder {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.registry
            .get_or_create_counter(key, |c| Counter::from_arc(Arc::clone(c)))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.registry
            .get_or_create_gauge(key, |g| Gauge::from_arc(Arc::clone(g)))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        self.registry
            .get_or_create_histogram(key, |h| Histogram::from_arc(Arc::clone(h)))
    }
}
