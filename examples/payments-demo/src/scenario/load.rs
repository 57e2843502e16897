//! The load generator: drives the service over real HTTP, bounded in requests and
//! time. Order workers create orders (Sber `register`) and confirm some of them (Sber
//! `confirm`, and `register` again for orders created but not paid); customer workers
//! read customers.
//!
//! Arrivals are open-loop, as users arrive: each worker starts a step every `pace`
//! whether or not its earlier steps have been answered, so a service that hangs piles
//! up requests in flight instead of slowing the load down. Every request is counted in
//! the scenario phase it started in.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// How the load is shaped.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The service's base URL.
    pub base_url: String,
    /// Concurrent order workers (each at most one request in flight).
    pub order_workers: usize,
    /// Concurrent customer workers.
    pub customer_workers: usize,
    /// The pause between two requests of one worker.
    pub pace: Duration,
    /// No request starts after this instant.
    pub deadline: Instant,
    /// No more than this many requests in all.
    pub max_requests: u64,
}

/// What the load generator saw.
#[derive(Debug, Default)]
pub struct LoadStats {
    /// Latencies not yet taken by [`tick`](Self::tick), with the phase each request
    /// started in.
    latencies_us: Mutex<Vec<(usize, u64)>>,
    statuses: Mutex<BTreeMap<String, u64>>,
    in_flight: AtomicI64,
    sent: AtomicU64,
    unpaid: Mutex<VecDeque<u64>>,
    /// The scenario phase requests starting now belong to.
    phase: AtomicUsize,
    /// Per phase (requests started in it): every latency, the most in flight.
    phases: Mutex<BTreeMap<usize, PhaseLoad>>,
}

/// The requests that started in one phase.
#[derive(Debug, Default, Clone)]
pub struct PhaseLoad {
    /// Their latencies, in microseconds, in the order they were answered.
    pub latencies_us: Vec<u64>,
    /// The most requests in flight at once while the phase ran.
    pub max_in_flight: i64,
}

impl PhaseLoad {
    /// The `q` quantile of the latencies (0 to 1).
    pub fn quantile(&self, q: f64) -> Duration {
        quantile(&mut self.latencies_us.clone(), q)
    }

    /// How many were answered within `limit`.
    pub fn within(&self, limit: Duration) -> usize {
        let limit = u64::try_from(limit.as_micros()).unwrap_or(u64::MAX);
        self.latencies_us.iter().filter(|&&us| us <= limit).count()
    }
}

fn quantile(all: &mut [u64], q: f64) -> Duration {
    if all.is_empty() {
        return Duration::ZERO;
    }
    all.sort_unstable();
    let i = ((all.len() - 1) as f64 * q).round() as usize;
    Duration::from_micros(all[i])
}

/// One second's latencies.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tick {
    /// Requests that finished.
    pub requests: usize,
    /// Median latency.
    pub p50: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
}

impl LoadStats {
    /// Takes the latencies recorded since the last call, by the phase their requests
    /// started in.
    pub fn tick(&self) -> BTreeMap<usize, Tick> {
        let all = std::mem::take(
            &mut *self
                .latencies_us
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let mut by_phase: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        for (phase, us) in all {
            by_phase.entry(phase).or_default().push(us);
        }
        by_phase
            .into_iter()
            .map(|(phase, mut us)| {
                let tick = Tick {
                    requests: us.len(),
                    p50: quantile(&mut us, 0.50),
                    p99: quantile(&mut us, 0.99),
                };
                (phase, tick)
            })
            .collect()
    }

    /// Requests starting from now on belong to `phase`.
    pub fn set_phase(&self, phase: usize) {
        self.phase.store(phase, Ordering::Relaxed);
    }

    /// Every phase's requests so far, by the phase they started in.
    pub fn phases(&self) -> BTreeMap<usize, PhaseLoad> {
        self.phases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Every request so far, whatever its phase.
    pub fn whole_run(&self) -> PhaseLoad {
        self.phases()
            .into_values()
            .fold(PhaseLoad::default(), |mut all, phase| {
                all.latencies_us.extend(phase.latencies_us);
                all.max_in_flight = all.max_in_flight.max(phase.max_in_flight);
                all
            })
    }

    /// A request starts: one more in flight. Returns its phase.
    fn started(&self) -> usize {
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        let phase = self.phase.load(Ordering::Relaxed);
        let mut phases = self
            .phases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = phases.entry(phase).or_default();
        entry.max_in_flight = entry.max_in_flight.max(now);
        phase
    }

    /// Requests in flight right now.
    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Requests sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Answers by route and status, e.g. `POST /orders 409` → 12.
    pub fn statuses(&self) -> BTreeMap<String, u64> {
        self.statuses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn record(&self, phase: usize, route: &str, status: Option<u16>, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.latencies_us
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((phase, micros));
        self.phases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(phase)
            .or_default()
            .latencies_us
            .push(micros);
        let status = status.map_or_else(|| "error".to_owned(), |s| s.to_string());
        *self
            .statuses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(format!("{route} {status}"))
            .or_default() += 1;
    }
}

/// The running load; [`Load::stop`] ends it.
#[derive(Debug)]
pub struct Load {
    stats: Arc<LoadStats>,
    stop: Arc<AtomicBool>,
    workers: JoinSet<()>,
}

impl Load {
    /// Starts the workers.
    ///
    /// # Panics
    ///
    /// If reqwest cannot build a plain HTTP client (its TLS backend fails to start).
    pub fn start(config: LoadConfig) -> Self {
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a plain HTTP client builds");
        let stats = Arc::new(LoadStats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = JoinSet::new();
        let worker = |kind: Kind, n: usize| Worker {
            kind,
            n,
            client: client.clone(),
            config: config.clone(),
            stats: Arc::clone(&stats),
            stop: Arc::clone(&stop),
        };
        for n in 0..config.order_workers {
            workers.spawn(Arc::new(worker(Kind::Orders, n)).run());
        }
        for n in 0..config.customer_workers {
            workers.spawn(Arc::new(worker(Kind::Customers, n)).run());
        }
        Load {
            stats,
            stop,
            workers,
        }
    }

    /// What it has seen so far.
    pub fn stats(&self) -> &Arc<LoadStats> {
        &self.stats
    }

    /// Stops the workers and waits for their last requests.
    pub async fn stop(mut self) -> Arc<LoadStats> {
        self.stop.store(true, Ordering::Relaxed);
        while self.workers.join_next().await.is_some() {}
        self.stats
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Orders,
    Customers,
}

struct Worker {
    kind: Kind,
    n: usize,
    client: reqwest::Client,
    config: LoadConfig,
    stats: Arc<LoadStats>,
    stop: Arc<AtomicBool>,
}

impl Worker {
    fn may_send(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
            && Instant::now() < self.config.deadline
            && self.stats.sent.fetch_add(1, Ordering::Relaxed) < self.config.max_requests
    }

    /// Starts a step every `pace` (open loop: without waiting for earlier ones), then
    /// waits for the steps still running.
    async fn run(self: Arc<Self>) {
        let mut i: u64 = 0;
        let mut steps = JoinSet::new();
        // Spread the workers' first requests over one pace.
        let offset = self.config.pace.mul_f64(self.n as f64 / 8.0);
        tokio::time::sleep(offset).await;
        let mut next = Instant::now();
        while self.may_send() {
            i += 1;
            let worker = Arc::clone(&self);
            steps.spawn(async move { worker.step(i).await });
            next += self.config.pace;
            tokio::time::sleep_until(next).await;
            while steps.try_join_next().is_some() {}
        }
        while steps.join_next().await.is_some() {}
    }

    async fn step(&self, i: u64) {
        match self.kind {
            Kind::Orders => self.order_step(i).await,
            Kind::Customers => {
                let id = format!("c-{}", (self.n as u64 * 1000 + i) % 50);
                self.send(
                    "GET /customers/{id}",
                    self.client.get(self.url(&format!("/customers/{id}"))),
                )
                .await;
            }
        }
    }

    async fn order_step(&self, i: u64) {
        // Every third step confirms an order: one created but not paid if there is one
        // (its payment is registered first), else one just created.
        if i % 3 == 0 {
            let unpaid = self
                .stats
                .unpaid
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop_front();
            if let Some(id) = unpaid {
                let (status, _) = self
                    .send(
                        "POST /orders/{id}/confirm",
                        self.client.post(self.url(&format!("/orders/{id}/confirm"))),
                    )
                    .await;
                if status != Some(200) {
                    self.remember_unpaid(id);
                }
                return;
            }
        }
        let body = json!({ "customer_id": format!("c-{}", self.n), "amount": 10_000 + i });
        let (status, body) = self
            .send(
                "POST /orders",
                self.client.post(self.url("/orders")).json(&body),
            )
            .await;
        let id = body.as_ref().and_then(|b| {
            b.get("id")
                .or_else(|| b.get("order").and_then(|o| o.get("id")))
                .and_then(Value::as_u64)
        });
        match (status, id) {
            (Some(409), Some(id)) => self.remember_unpaid(id),
            (Some(201), Some(id)) if i % 3 == 0 && self.may_send() => {
                self.send(
                    "POST /orders/{id}/confirm",
                    self.client.post(self.url(&format!("/orders/{id}/confirm"))),
                )
                .await;
            }
            _ => {}
        }
    }

    fn remember_unpaid(&self, id: u64) {
        let mut unpaid = self
            .stats
            .unpaid
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if unpaid.len() < 1000 {
            unpaid.push_back(id);
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base_url)
    }

    async fn send(
        &self,
        route: &str,
        request: reqwest::RequestBuilder,
    ) -> (Option<u16>, Option<Value>) {
        let phase = self.stats.started();
        let start = Instant::now();
        let result = request.send().await;
        let (status, body) = match result {
            Ok(response) => {
                let status = response.status().as_u16();
                (Some(status), response.json::<Value>().await.ok())
            }
            Err(_) => (None, None),
        };
        self.stats.record(phase, route, status, start.elapsed());
        self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        (status, body)
    }
}
