//! What the scenario prints: the header, one line per second, the summary.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use outbound_guard::Guard;

use super::env::{EnvSetting, Source};
use super::load::{LoadStats, PhaseLoad, Tick};
use super::World;
use crate::bootstrap::Container;
use crate::fakes::FakeUpstream;
use outbound_guard_tests::recorder::Counts;

/// One thing the scenario expected, and whether it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Whether it happened.
    pub passed: bool,
    /// What was expected.
    pub what: String,
    /// What was seen.
    pub detail: String,
}

impl Check {
    /// A check that passed or not.
    pub fn new(passed: bool, what: impl Into<String>, detail: impl Into<String>) -> Self {
        Check {
            passed,
            what: what.into(),
            detail: detail.into(),
        }
    }

    /// A check that passed.
    pub fn pass(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(true, what, detail)
    }

    /// A check that failed.
    pub fn fail(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(false, what, detail)
    }
}

/// `0.4ms`, `12.3ms`, `812ms`, `1.20s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{:.2}s", d.as_secs_f64())
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

fn describe_guard(guard: &Guard) -> String {
    let s = guard.settings();
    format!(
        "opens at {:.0}% of the last {} calls (min {}), open {}, {} half-open trials, slow > {}, read_timeout {}, total_timeout {}, bulkhead {}",
        s.cb_failure_rate() * 100.0,
        s.cb_window_size(),
        s.cb_min_calls(),
        secs(s.cb_open_duration()),
        s.cb_half_open_calls(),
        secs(s.cb_slow_threshold()),
        secs(s.read_timeout()),
        secs(s.total_timeout()),
        guard.bulkhead_permits()
    )
}

pub(super) fn header(
    env: &[EnvSetting],
    container: &Container,
    sber: &FakeUpstream,
    customer: &FakeUpstream,
    service: &str,
    twin: &str,
) {
    println!("payments-demo: a payments service whose Sber and customer adapters are guarded by #[circuit_breaker]");
    println!();
    let file = if container.watcher.is_some() {
        format!(
            "{} (mounted through RESILIENCE_SETTINGS, reloaded when it changes)",
            container.settings_origin
        )
    } else {
        "examples/payments-demo/resilience.toml".to_owned()
    };
    println!("settings: {file}, overridden by the environment (the same variables you would set):");
    for setting in env {
        let note = match &setting.source {
            Source::Demo => "demo default, set it yourself to change".to_owned(),
            Source::User => "yours".to_owned(),
            Source::Fake { replaced: None } => "the demo's fake server".to_owned(),
            Source::Fake {
                replaced: Some(value),
            } => format!("the demo's fake server; your {value} is ignored here"),
        };
        let assignment = format!("{}={}", setting.name, setting.value);
        println!("  {assignment:<50} # {note}");
    }
    println!();
    for guard in container.guards.iter() {
        println!("  {:<8} {}", guard.system(), describe_guard(guard));
    }
    println!();
    println!(
        "fake sber {}   fake customer {}   service {service}",
        sber.url(),
        customer.url()
    );
    println!(
        "unguarded twin {twin}: the same service and HTTP clients, adapters without #[circuit_breaker], its own fakes, the same load and the same Sber faults at the same moments"
    );
    println!();
    println!("each second: phase │ per system: breaker state, guarded calls ok / failed (slow) / rejected, calls in flight │ the service's HTTP answers and their latency │ the twin's");
    println!("  calls and requests are counted in the phase they started in: a second where a phase ends has one line per phase");
    println!("each transition as it happens: ▶ from → to: the runtime's log line");
    println!();
}

/// One system's column: its calls that started in the phase and ended this second, and,
/// on the current phase's line, its breaker state and calls in flight.
fn system_column(guard: &Guard, calls: Counts, now: bool) -> String {
    let slow = if calls.slow > 0 {
        format!(" ({} slow)", calls.slow)
    } else {
        String::new()
    };
    let (state, in_flight) = if now {
        (
            guard.breaker().state().as_str().to_owned(),
            guard.in_flight().to_string(),
        )
    } else {
        ("·".to_owned(), "·".to_owned())
    };
    format!(
        "{} {state:<9} ok {:>3}  failed {:>3}{slow}  rejected {:>3}  in flight {in_flight}",
        guard.system(),
        calls.success,
        calls.bad(),
        calls.rejected(),
    )
}

fn http_column(tick: Tick) -> String {
    format!(
        "{:>3} req/s  p50 {:>5}  p99 {:>5}",
        tick.requests,
        format_duration(tick.p50),
        format_duration(tick.p99),
    )
}

/// Per phase: the counts now minus `last`, which becomes now.
fn deltas(
    now: BTreeMap<usize, Counts>,
    last: &mut BTreeMap<usize, Counts>,
) -> BTreeMap<usize, Counts> {
    let out = now
        .iter()
        .map(|(phase, counts)| {
            let before = last.get(phase).copied().unwrap_or_default();
            (*phase, counts.since(&before))
        })
        .filter(|(_, d)| d.total() > 0)
        .collect();
    *last = now;
    out
}

pub(super) async fn ticker(world: Arc<World>) {
    let mut interval = tokio::time::interval(Duration::from_secs(1));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval.tick().await;
    let mut sber_last = BTreeMap::new();
    let mut customer_last = BTreeMap::new();
    let sber_guard = world.container.sber.system_guard();
    let customer_guard = world.container.customers.system_guard();
    loop {
        interval.tick().await;
        let at = world.recorder.start().elapsed();
        let current = world.phase().0;
        let http = world.loads.0.tick();
        let twin = world.loads.1.tick();
        let sber = deltas(world.recorder.counts_by_phase("sber"), &mut sber_last);
        let customer = deltas(
            world.recorder.counts_by_phase("customer"),
            &mut customer_last,
        );
        let mut phases: Vec<usize> = http
            .keys()
            .chain(twin.keys())
            .chain(sber.keys())
            .chain(customer.keys())
            .copied()
            .filter(|p| *p <= current)
            .collect();
        phases.push(current);
        phases.sort_unstable();
        phases.dedup();
        for phase in phases {
            let now = phase == current;
            let get = |m: &BTreeMap<usize, Counts>| m.get(&phase).copied().unwrap_or_default();
            println!(
                "{:>6.2}s  {:<10} │ {} │ {} │ http {} │ twin {}, in flight {}",
                at.as_secs_f64(),
                world.phase_name(phase),
                system_column(sber_guard, get(&sber), now),
                system_column(customer_guard, get(&customer), now),
                http_column(http.get(&phase).copied().unwrap_or_default()),
                http_column(twin.get(&phase).copied().unwrap_or_default()),
                if now {
                    world.loads.1.in_flight().to_string()
                } else {
                    "·".to_owned()
                },
            );
        }
    }
}

/// What one HTTP answer means, for the summary.
fn explain(route_status: &str) -> &'static str {
    let (route, status) = route_status.rsplit_once(' ').unwrap_or((route_status, ""));
    match (route, status) {
        ("POST /orders", "201") => "created and paid: Sber registered the payment",
        ("POST /orders", "409") => {
            "created but not paid: Sber failed (500, or cut off by read_timeout) or its guard refused the call (breaker open, half-open trials taken, bulkhead full); confirming it later retries the payment"
        }
        ("POST /orders" | "POST /orders/{id}/confirm", "402") => {
            "declined by Sber: a business answer, not an outage"
        }
        ("POST /orders/{id}/confirm", "200") => "paid: Sber confirmed (or first registered) the payment",
        ("POST /orders/{id}/confirm", "502") => {
            "Sber was called and failed — answered 500, or was cut off by read_timeout — while its breaker still let calls through (before it opened, or a failing half-open trial)"
        }
        ("POST /orders/{id}/confirm", "503") => {
            "refused by Sber's guard without reaching Sber: breaker open (with Retry-After), half-open trials taken, or bulkhead full"
        }
        ("POST /orders/{id}/confirm" | "GET /customers/{id}", "404") => "no such order or customer",
        ("GET /customers/{id}", "200") => "the customer system answered",
        ("GET /customers/{id}", "502") => "the customer system was called and failed",
        ("GET /customers/{id}", "503") => "refused by the customer system's guard",
        (_, "error") => "no HTTP answer within the load generator's 10s",
        _ => "",
    }
}

fn percent(part: usize, all: usize) -> String {
    if all == 0 {
        "–".to_owned()
    } else {
        format!("{:.0}%", part as f64 * 100.0 / all as f64)
    }
}

/// One row of the side-by-side table.
fn side_by_side_row(name: &str, guarded: &PhaseLoad, twin: &PhaseLoad, hits: (u64, u64)) {
    let second = Duration::from_secs(1);
    println!(
        "  {name:<11} {:>8} {:>9}   {:>8} {:>9}   {:>8} {:>9}   {:>8} {:>9}",
        guarded.max_in_flight,
        twin.max_in_flight,
        format_duration(guarded.quantile(0.99)),
        format_duration(twin.quantile(0.99)),
        hits.0,
        hits.1,
        percent(guarded.within(second), guarded.latencies_us.len()),
        percent(twin.within(second), twin.latencies_us.len()),
    );
}

fn side_by_side(world: &World) {
    let log = world
        .phase_log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let end_hits = (world.sber.faults().hits(), world.twin.sber.faults().hits());
    let guarded = world.loads.0.phases();
    let twin = world.loads.1.phases();
    println!(
        "side by side — the same load and Sber faults against the service guarded by #[circuit_breaker] and against its unguarded twin:"
    );
    println!(
        "  {:<11} {:>18}   {:>18}   {:>18}   {:>18}",
        "", "requests in flight", "p99 latency", "calls reaching Sber", "answered within 1s"
    );
    println!(
        "  {:<11} {:>8} {:>9}   {:>8} {:>9}   {:>8} {:>9}   {:>8} {:>9}",
        "phase",
        "guarded",
        "unguarded",
        "guarded",
        "unguarded",
        "guarded",
        "unguarded",
        "guarded",
        "unguarded"
    );
    let empty = PhaseLoad::default();
    for (i, entry) in log.iter().enumerate() {
        let next = log.get(i + 1).map_or(end_hits, |e| e.sber_hits);
        let hits = (
            next.0.saturating_sub(entry.sber_hits.0),
            next.1.saturating_sub(entry.sber_hits.1),
        );
        let phase = i + 1;
        side_by_side_row(
            entry.name,
            guarded.get(&phase).unwrap_or(&empty),
            twin.get(&phase).unwrap_or(&empty),
            hits,
        );
    }
    side_by_side_row(
        "whole run",
        &world.loads.0.whole_run(),
        &world.loads.1.whole_run(),
        end_hits,
    );
    for line in [
        "  requests in flight: the most the load generator had waiting on the service at once (requests arrive at a steady rate, answered or not);",
        "  every figure counts a request in the phase it started in; calls reaching Sber are the fakes' own counts.",
        "  reading it: while Sber hangs, the twin sends every call to Sber and each waits for read_timeout, so requests pile up and few",
        "  are answered within a second; the guarded service lets only its bulkhead's calls reach the hung Sber, opens while they still",
        "  run, and answers the rest at once (503, or 409 created-not-paid, with Retry-After). While Sber is merely slow, the twin's",
        "  answers are slow but paid; the guard trades them for fast 409s — the guide's choice for a critical system (R-RES-CB-5).",
    ] {
        println!("{line}");
    }
}

pub(super) fn summary(world: &World, stats: &LoadStats, checks: &[Check], elapsed: Duration) {
    let twin_statuses = world.loads.1.statuses();
    println!();
    println!("── summary: {:.1}s ──", elapsed.as_secs_f64());
    println!("phases:");
    let log = world
        .phase_log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    for (i, entry) in log.iter().enumerate() {
        let end = log.get(i + 1).map_or(elapsed, |next| next.at);
        println!(
            "  {:<10} {:>6.2}s → {:>6.2}s  ({:.1}s)",
            entry.name,
            entry.at.as_secs_f64(),
            end.as_secs_f64(),
            end.saturating_sub(entry.at).as_secs_f64()
        );
    }
    println!("guarded calls:");
    for guard in world.container.guards.iter() {
        let c = world.recorder.counts_of(guard.system());
        println!(
            "  {:<8} ok {}, failed {} (of which slow {}, timed out {}), rejected {}; breaker now {}",
            guard.system(),
            c.success,
            c.bad(),
            c.slow,
            c.timeout,
            c.rejected(),
            guard.breaker().state()
        );
    }
    let statuses = stats.statuses();
    println!(
        "the service's answers ({} requests; the unguarded twin's beside them):",
        statuses.values().sum::<u64>()
    );
    let mut keys: Vec<&String> = statuses.keys().chain(twin_statuses.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let n = statuses.get(key).copied().unwrap_or(0);
        let twin = twin_statuses.get(key).copied().unwrap_or(0);
        println!("  {key:<34} × {n:<6} twin × {twin:<6} {}", explain(key));
    }
    side_by_side(world);
    println!("transitions:");
    let transitions = world.recorder.transitions();
    if transitions.is_empty() {
        println!("  none");
    }
    for t in &transitions {
        println!(
            "  {:>6.2}s  {} → {}: {}",
            t.at.saturating_duration_since(world.recorder.start())
                .as_secs_f64(),
            t.from,
            t.to,
            t.message
        );
    }
    println!("checks:");
    for check in checks {
        let mark = if check.passed { "ok  " } else { "FAIL" };
        println!("  {mark} {} — {}", check.what, check.detail);
    }
    let failed: Vec<&Check> = checks.iter().filter(|c| !c.passed).collect();
    println!();
    if failed.is_empty() && !checks.is_empty() {
        println!(
            "PASS: every expected transition happened, in {:.1}s",
            elapsed.as_secs_f64()
        );
    } else {
        for check in failed {
            println!("FAIL: missing: {} ({})", check.what, check.detail);
        }
    }
}

pub(super) fn serving(world: &World) {
    let url = &world.service_url;
    println!();
    println!("--serve: the service keeps running (fakes healed). Try:");
    println!("  curl -si -XPOST {url}/orders -H 'content-type: application/json' -d '{{\"customer_id\":\"c-1\",\"amount\":1000}}'");
    println!("  curl -si -XPOST {url}/orders/1/confirm");
    println!("  curl -si {url}/customers/c-1");
    println!("  curl -s  {url}/health/ready");
    let admin = &world.admin_url;
    println!("operator routes and metrics, on the admin listener only (metrics need no token):");
    println!("  curl -s  {admin}/metrics");
    if world.container.admin_token.is_some() {
        println!("  curl -s -XPOST -H \"Authorization: Bearer $DEMO_ADMIN_TOKEN\" {admin}/admin/breakers/sber/force_open   # or disable, reset");
    } else {
        println!(
            "  (the controls are refused: DEMO_ADMIN_TOKEN is not set; rerun with it set, then)"
        );
        println!("  curl -s -XPOST -H \"Authorization: Bearer $DEMO_ADMIN_TOKEN\" {admin}/admin/breakers/sber/force_open   # or disable, reset");
    }
    println!("break Sber and watch the breaker (transitions print here):");
    println!(
        "  curl -s -XPUT '{}/_faults?fail_share=1'       # every call fails",
        world.sber.url()
    );
    println!(
        "  curl -s -XPUT '{}/_faults?latency_ms=800'     # slow",
        world.sber.url()
    );
    println!(
        "  curl -s -XPUT '{}/_faults?fail_share=0&latency_ms=0'   # healthy",
        world.sber.url()
    );
    println!(
        "  the customer system's faults: {}/_faults",
        world.customer.url()
    );
    println!(
        "the unguarded twin runs too, at {} (its Sber's faults: {}/_faults)",
        world.twin.url,
        world.twin.sber.url()
    );
    println!("Ctrl-C stops.");
}
