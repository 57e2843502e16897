//! A `metrics::Recorder` for tests that keeps every series' current value (reading it does
//! not reset it, unlike `metrics-util`'s `DebuggingRecorder`), its descriptions, and the
//! order series were registered in. Shared by the unit tests and `tests/metrics.rs`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};

/// `name{label="value",…}` with labels sorted: one series.
pub type Series = String;

#[derive(Debug, Default)]
pub struct TestRecorder {
    counters: Mutex<BTreeMap<Series, Arc<CounterCell>>>,
    gauges: Mutex<BTreeMap<Series, Arc<GaugeCell>>>,
    histograms: Mutex<BTreeMap<Series, Arc<HistogramCell>>>,
    descriptions: Mutex<BTreeMap<String, (Option<Unit>, String)>>,
}

#[derive(Debug, Default)]
struct CounterCell(AtomicU64);

impl CounterFn for CounterCell {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        self.0.fetch_max(value, Ordering::Relaxed);
    }
}

#[derive(Debug, Default)]
struct GaugeCell(Mutex<f64>);

impl GaugeFn for GaugeCell {
    fn increment(&self, value: f64) {
        *self.0.lock().unwrap() += value;
    }

    fn decrement(&self, value: f64) {
        *self.0.lock().unwrap() -= value;
    }

    fn set(&self, value: f64) {
        *self.0.lock().unwrap() = value;
    }
}

#[derive(Debug, Default)]
struct HistogramCell(Mutex<Vec<f64>>);

impl HistogramFn for HistogramCell {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
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

impl TestRecorder {
    pub fn new() -> Arc<TestRecorder> {
        Arc::new(TestRecorder::default())
    }

    /// The counter's value; `None` if it was never registered.
    pub fn counter(&self, series: &str) -> Option<u64> {
        let counters = self.counters.lock().unwrap();
        counters.get(series).map(|c| c.0.load(Ordering::Relaxed))
    }

    /// The gauge's value; `None` if it was never registered.
    pub fn gauge(&self, series: &str) -> Option<f64> {
        let gauges = self.gauges.lock().unwrap();
        gauges.get(series).map(|g| *g.0.lock().unwrap())
    }

    /// The histogram's samples; `None` if it was never registered.
    pub fn histogram(&self, series: &str) -> Option<Vec<f64>> {
        let histograms = self.histograms.lock().unwrap();
        histograms.get(series).map(|h| h.0.lock().unwrap().clone())
    }

    /// Every registered series of every kind, sorted.
    pub fn all_series(&self) -> Vec<Series> {
        let mut all: Vec<Series> = self.counters.lock().unwrap().keys().cloned().collect();
        all.extend(self.gauges.lock().unwrap().keys().cloned());
        all.extend(self.histograms.lock().unwrap().keys().cloned());
        all.sort();
        all
    }

    /// A metric's unit and description.
    pub fn description(&self, name: &str) -> Option<(Option<Unit>, String)> {
        self.descriptions.lock().unwrap().get(name).cloned()
    }

    fn describe(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.descriptions
            .lock()
            .unwrap()
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
        let cell = self
            .counters
            .lock()
            .unwrap()
            .entry(series(key))
            .or_default()
            .clone();
        Counter::from_arc(cell)
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        let cell = self
            .gauges
            .lock()
            .unwrap()
            .entry(series(key))
            .or_default()
            .clone();
        Gauge::from_arc(cell)
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let cell = self
            .histograms
            .lock()
            .unwrap()
            .entry(series(key))
            .or_default()
            .clone();
        Histogram::from_arc(cell)
    }
}
