//! The load generator: drives the service over real HTTP, bounded in requests and
//! time. Order workers create orders (Sber `register`) and confirm some of them (Sber
//! `confirm`, and `register` again for orders created but not paid); customer workers
//! read customers.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
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
    latencies_us: Mutex<Vec<u64>>,
    statuses: Mutex<BTreeMap<String, u64>>,
    in_flight: AtomicI64,
    sent: AtomicU64,
    unpaid: Mutex<VecDeque<u64>>,
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
    /// Takes the latencies recorded since the last call.
    pub fn tick(&self) -> Tick {
        let mut all =
            std::mem::take(&mut *self.latencies_us.lock().unwrap_or_else(|e| e.into_inner()));
        if all.is_empty() {
            return Tick::default();
        }
        all.sort_unstable();
        let at = |q: f64| {
            let i = ((all.len() - 1) as f64 * q).round() as usize;
            Duration::from_micros(all[i])
        };
        Tick {
            requests: all.len(),
            p50: at(0.50),
            p99: at(0.99),
        }
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
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn record(&self, route: &str, status: Option<u16>, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.latencies_us
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(micros);
        let status = status.map_or_else(|| "error".to_owned(), |s| s.to_string());
        *self
            .statuses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
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
            workers.spawn(worker(Kind::Orders, n).run());
        }
        for n in 0..config.customer_workers {
            workers.spawn(worker(Kind::Customers, n).run());
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

    async fn run(self) {
        let mut i: u64 = 0;
        // Spread the workers' first requests over one pace.
        let offset = self.config.pace.mul_f64(self.n as f64 / 8.0);
        tokio::time::sleep(offset).await;
        while self.may_send() {
            i += 1;
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
            tokio::time::sleep(self.config.pace).await;
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
                .unwrap_or_else(|e| e.into_inner())
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
        let mut unpaid = self.stats.unpaid.lock().unwrap_or_else(|e| e.into_inner());
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
        self.stats.in_flight.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let result = request.send().await;
        let (status, body) = match result {
            Ok(response) => {
                let status = response.status().as_u16();
                (Some(status), response.json::<Value>().await.ok())
            }
            Err(_) => (None, None),
        };
        self.stats.record(route, status, start.elapsed());
        self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        (status, body)
    }
}
