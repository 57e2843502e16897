//! The HTTP API against the fake Sber and customer servers, over real sockets on
//! 127.0.0.1: the 503 with `Retry-After` and a JSON body when Sber's breaker is open,
//! the 409 "created but not paid" on order creation, slow calls tripping the breaker
//! before any timeout, and the customer system untouched throughout.

use std::time::Duration;

use outbound_guard::State;
use serde_json::{json, Value};

/// The operator's token the harness's service is started with.
const ADMIN_TOKEN: &str = "http-api-admin-token";

mod common;
use common::Harness;

/// Fakes, the service between them (with the operator's token), and a client; `env`
/// overrides the settings as `CLIENT_…` variables would.
async fn start(env: &[(&str, &str)]) -> Harness {
    common::start_with(env, Some(ADMIN_TOKEN)).await
}

struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

impl Harness {
    async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = response.json().await.unwrap_or(Value::Null);
        Answer {
            status,
            retry_after,
            body,
        }
    }

    async fn create(&self, amount: u64) -> Answer {
        let body = json!({ "customer_id": "c-1", "amount": amount });
        self.send(self.client.post(format!("{}/orders", self.url)).json(&body))
            .await
    }

    async fn confirm(&self, id: u64) -> Answer {
        self.send(
            self.client
                .post(format!("{}/orders/{id}/confirm", self.url)),
        )
        .await
    }

    async fn get(&self, path: &str) -> Answer {
        self.send(self.client.get(format!("{}{path}", self.url)))
            .await
    }

    fn sber_state(&self) -> State {
        self.container.sber.system_guard().breaker().state()
    }

    fn customer_state(&self) -> State {
        self.container.customers.system_guard().breaker().state()
    }

    /// Sber fails every call until the breaker opens (`cb_min_calls` failures).
    async fn trip_sber(&self) {
        self.sber.faults().set_fail_share(1.0);
        for _ in 0..50 {
            if self.sber_state() == State::Open {
                break;
            }
            let answer = self.create(1_000).await;
            assert_eq!(answer.status, 409, "{}", answer.body);
        }
        assert_eq!(self.sber_state(), State::Open);
    }
}

#[tokio::test]
async fn healthy_order_is_paid_then_confirmed_and_customers_are_read() {
    let h = start(&[]).await;

    let created = h.create(1_500).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["status"], "paid");
    let id = created.body["id"].as_u64().unwrap();

    let confirmed = h.confirm(id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(confirmed.body["status"], "confirmed");
    assert_eq!(
        h.get(&format!("/orders/{id}")).await.body["status"],
        "confirmed"
    );
    assert_eq!(h.confirm(999).await.status, 404);

    let customer = h.get("/customers/c-7").await;
    assert_eq!(customer.status, 200);
    assert_eq!(customer.body, json!({ "id": "c-7", "name": "Customer 7" }));
    // An unknown customer is a correct answer of the customer system, not an outage.
    for _ in 0..20 {
        assert_eq!(h.get("/customers/nobody").await.status, 404);
    }
    let snapshot = h.container.customers.system_guard().breaker().snapshot();
    assert_eq!((snapshot.state, snapshot.failures), (State::Closed, 0));

    // A declined payment is Sber answering correctly: 402, and no breaker failure.
    for _ in 0..20 {
        let declined = h.create(payments_demo::fakes::SBER_LIMIT + 1).await;
        assert_eq!(declined.status, 409);
        assert_eq!(declined.body["payment_error"]["error"], "payment_declined");
    }
    assert_eq!(
        h.container
            .sber
            .system_guard()
            .breaker()
            .snapshot()
            .failures,
        0
    );
}

#[tokio::test]
async fn confirm_while_sber_is_open_is_a_fast_503_with_retry_after_and_json() {
    let h = start(&[]).await;
    let paid = h.create(2_000).await;
    assert_eq!(paid.status, 201);
    let id = paid.body["id"].as_u64().unwrap();

    h.trip_sber().await;
    h.sber.faults().heal();
    let hits = h.sber.faults().hits();

    let answer = h.confirm(id).await;
    assert_eq!(answer.status, 503, "{}", answer.body);
    let retry_after: u64 = answer.retry_after.expect("Retry-After").parse().unwrap();
    // Open for the guide's 30 s: the header says how long is left, at least 1 s.
    assert!(
        (1..=30).contains(&retry_after),
        "Retry-After: {retry_after}"
    );
    assert_eq!(answer.body["error"], "system_unavailable");
    assert_eq!(answer.body["system"], "sber");
    assert_eq!(answer.body["reason"], "open");
    assert_eq!(answer.body["retry_after_secs"], retry_after);
    assert!(answer.body["detail"].as_str().unwrap().contains("sber"));
    assert_eq!(
        h.sber.faults().hits(),
        hits,
        "an open breaker must not reach Sber"
    );

    // The customer system is another breaker, another client: untouched.
    assert_eq!(h.get("/customers/c-1").await.status, 200);
    assert_eq!(h.customer_state(), State::Closed);
    assert!(h.recorder.transitions().iter().all(|t| t.system == "sber"));

    // Readiness degrades, does not fail.
    let ready = h.get("/health/ready").await;
    assert_eq!(ready.status, 200);
    assert_eq!(ready.body["status"], "degraded");
    assert_eq!(ready.body["systems"]["sber"]["state"], "open");
    assert_eq!(ready.body["systems"]["customer"]["state"], "closed");
}

#[tokio::test]
async fn create_while_sber_is_unavailable_is_409_created_not_paid_and_confirm_pays_later() {
    let h = start(&[("CLIENT_SBER__CB_OPEN_DURATION", "0.8")]).await;
    h.trip_sber().await;
    h.sber.faults().heal();

    let answer = h.create(3_000).await;
    assert_eq!(answer.status, 409, "{}", answer.body);
    assert_eq!(answer.body["error"], "created_not_paid");
    assert_eq!(answer.body["order"]["status"], "created");
    assert_eq!(answer.body["payment_error"]["error"], "system_unavailable");
    assert_eq!(answer.body["payment_error"]["system"], "sber");
    assert_eq!(
        answer.retry_after.as_deref(),
        Some("1"),
        "under 0.8 s left, rounded up"
    );
    let id = answer.body["order"]["id"].as_u64().unwrap();
    assert_eq!(
        h.get(&format!("/orders/{id}")).await.body["status"],
        "created"
    );

    // Once the breaker lets trial calls through, confirming registers the payment first.
    let left = h
        .container
        .sber
        .system_guard()
        .breaker()
        .snapshot()
        .retry_after;
    tokio::time::sleep(left.unwrap_or_default() + Duration::from_millis(20)).await;
    let confirmed = h.confirm(id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(confirmed.body["status"], "confirmed");
    assert!(confirmed.body["payment"].is_string());
    assert_eq!(h.customer_state(), State::Closed);
}

#[tokio::test]
async fn slow_sber_trips_the_breaker_before_any_timeout() {
    let h = start(&[
        ("CLIENT_SBER__CONNECT_TIMEOUT", "0.1"),
        ("CLIENT_SBER__READ_TIMEOUT", "1"),
        ("CLIENT_SBER__TOTAL_TIMEOUT", "2"),
        ("CLIENT_SBER__CB_SLOW_THRESHOLD", "0.2"),
        ("CLIENT_SBER__CB_MIN_CALLS", "3"),
    ])
    .await;
    let settings = h.container.sber.system_guard().settings().clone();
    assert_eq!(settings.cb_slow_threshold(), Duration::from_millis(200));
    h.sber
        .faults()
        .set_latency(payments_demo::scenario::slow_latency(&settings));

    // Slow answers still pay the order; they count against the breaker.
    let slow = futures_join(&h, 3).await;
    assert!(slow.iter().all(|&s| s == 201), "{slow:?}");
    assert_eq!(h.sber_state(), State::Open);
    let counts = h.recorder.counts_of("sber");
    assert_eq!((counts.slow, counts.failure, counts.timeout), (3, 0, 0));
    assert_eq!(h.recorder.timeouts(), 0);

    let rejected = h.create(1_000).await;
    assert_eq!(rejected.status, 409);
    assert_eq!(rejected.body["payment_error"]["reason"], "open");
    assert_eq!(h.customer_state(), State::Closed);
}

/// `n` order creations at once.
async fn futures_join(h: &Harness, n: usize) -> Vec<u16> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let request = h
            .client
            .post(format!("{}/orders", h.url))
            .json(&json!({ "customer_id": "c-2", "amount": 500 }));
        set.spawn(async move { request.send().await.unwrap().status().as_u16() });
    }
    let mut statuses = Vec::new();
    while let Some(status) = set.join_next().await {
        statuses.push(status.unwrap());
    }
    statuses
}

#[tokio::test]
async fn operators_force_open_and_reset_and_metrics_are_exported() {
    let h = start(&[]).await;
    let paid = h.create(1_000).await;
    let id = paid.body["id"].as_u64().unwrap();

    let forced = h
        .send(
            h.client
                .post(format!("{}/admin/breakers/sber/force_open", h.admin_url))
                .bearer_auth(ADMIN_TOKEN),
        )
        .await;
    assert_eq!(forced.body["state"], "forced_open");
    let answer = h.confirm(id).await;
    assert_eq!(answer.status, 503);
    assert_eq!(answer.body["reason"], "forced_open");
    // An operator's action has no end the guard knows: the guide's cb_open_duration.
    assert_eq!(answer.retry_after.as_deref(), Some("30"));

    let reset = h
        .send(
            h.client
                .post(format!("{}/admin/breakers/sber/reset", h.admin_url))
                .bearer_auth(ADMIN_TOKEN),
        )
        .await;
    assert_eq!(reset.body["state"], "closed");
    assert_eq!(h.confirm(id).await.status, 200);

    let unknown = h
        .send(
            h.client
                .post(format!("{}/admin/breakers/default/reset", h.admin_url))
                .bearer_auth(ADMIN_TOKEN),
        )
        .await;
    assert_eq!(unknown.status, 404);

    let response = h
        .client
        .get(format!("{}/metrics", h.admin_url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.unwrap();
    assert!(
        text.contains(r#"resilience_calls_total{system="sber",outcome="success"}"#),
        "{text}"
    );
    assert!(text.contains(r#"resilience_state{system="customer",state="closed"} 1"#));
}

#[tokio::test]
async fn operator_routes_and_metrics_are_not_on_the_public_api() {
    let h = start(&[]).await;
    let forced = h
        .send(
            h.client
                .post(format!("{}/admin/breakers/sber/force_open", h.url)),
        )
        .await;
    assert_eq!(forced.status, 404);
    let metrics = h
        .client
        .get(format!("{}/metrics", h.url))
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status().as_u16(), 404);
    // The breaker was not touched: the public API still pays.
    assert_eq!(h.create(1_000).await.status, 201);
    assert_eq!(
        h.container.guards.get("sber").unwrap().breaker().state(),
        State::Closed
    );
}

/// Every `resilience_…` series and label value that the shipped alert rules and
/// dashboard (`ops/`) query is one the service really exports, and the export passes
/// `promtool check metrics` (required under `CI`; skipped with a note where Debian's
/// `prometheus` package is not installed).
#[tokio::test]
async fn the_shipped_rules_and_dashboard_query_what_the_service_exports() {
    let h = start(&[]).await;
    assert_eq!(h.create(1_000).await.status, 201);
    let scrape = h
        .client
        .get(format!("{}/metrics", h.admin_url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let ops = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops");
    for file in ["prometheus/rules.yml", "grafana/outbound-guard.json"] {
        let mut text = std::fs::read_to_string(ops.join(file)).unwrap();
        if std::path::Path::new(file)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            // The dashboard's queries, not its descriptions.
            let dashboard: Value = serde_json::from_str(&text).unwrap();
            text = dashboard["panels"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|panel| panel["targets"].as_array().unwrap())
                .map(|target| target["expr"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
                .join("\n");
        }
        let queried = queried_series(&text);
        assert!(
            queried.len() >= 5,
            "{file} queries too few series: {queried:?}"
        );
        for name in queried {
            assert!(
                scrape
                    .lines()
                    .any(|line| line.starts_with(&format!("{name}{{"))),
                "{file} queries `{name}`, which the service does not export:\n{scrape}"
            );
        }
        for (label, value) in queried_label_values(&text) {
            assert!(
                scrape.contains(&format!("{label}=\"{value}\"")),
                "{file} matches {label}=\"{value}\", which no exported series has:\n{scrape}"
            );
        }
    }
    promtool_check_metrics(&scrape);
    // Latency is a histogram (not a summary) whose buckets reach every system's
    // `total_timeout` (35 s by default), so a timed-out call never lands in `+Inf` alone.
    for system in ["sber", "customer"] {
        let total = h
            .container
            .guards
            .get(system)
            .unwrap()
            .settings()
            .total_timeout();
        let bucket = format!(
            "resilience_call_duration_seconds_bucket{{system=\"{system}\",le=\"{}\"}}",
            total.as_secs_f64()
        );
        assert!(scrape.contains(&bucket), "no {bucket}:\n{scrape}");
    }
    assert!(
        !scrape.contains("resilience_call_duration_seconds{"),
        "exported as a summary:\n{scrape}"
    );
}

/// The `resilience_…` names in `text`.
fn queried_series(text: &str) -> std::collections::BTreeSet<String> {
    text.match_indices("resilience_")
        .map(|(start, _)| {
            text[start..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// The fixed values of the labels the rules and dashboard match on (`state`, `reason`,
/// `outcome`, `from`, `to`), alternatives of `=~"a|b"` included.
fn queried_label_values(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for label in ["state", "reason", "outcome", "from", "to"] {
        for op in ["=\"", "=~\""] {
            let needle = format!("{label}{op}");
            for (start, _) in text.match_indices(&needle) {
                // A whole label name, not the end of a longer one.
                let before = text[..start].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    continue;
                }
                let rest = &text[start + needle.len()..];
                let value = &rest[..rest.find('"').unwrap()];
                for alternative in value.split('|') {
                    found.push((label.to_owned(), alternative.to_owned()));
                }
            }
        }
    }
    found
}

fn promtool_check_metrics(scrape: &str) {
    use std::io::Write;
    let child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("promtool not run ({e}): install Debian's `prometheus` package");
            return;
        }
        Err(e) => panic!("promtool is required under CI: {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(scrape.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
