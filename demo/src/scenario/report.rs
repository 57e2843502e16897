//! What the scenario prints: the header, one line per second, the summary.

use std::sync::Arc;
use std::time::Duration;

use resilience::Guard;

use super::env::{EnvSetting, Source};
use super::load::LoadStats;
use super::World;
use crate::bootstrap::Container;
use crate::fakes::FakeServer;

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
    sber: &FakeServer,
    customer: &FakeServer,
    service: &str,
) {
    println!("payments-demo: a payments service whose Sber and customer adapters are guarded by #[circuit_breaker]");
    println!();
    println!("settings: demo/resilience.toml, overridden by the environment (the same variables you would set):");
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
    println!();
    println!("each second: phase │ per system: breaker state, guarded calls ok / failed (slow) / rejected, calls in flight │ the service's HTTP answers and their latency");
    println!("each transition as it happens: ▶ from → to: the runtime's log line");
    println!();
}

fn system_column(world: &World, guard: &Guard, last: &mut super::recorder::Counts) -> String {
    let now = world.recorder.counts(guard.system());
    let d = now.since(last);
    *last = now;
    let slow = if d.slow > 0 {
        format!(" ({} slow)", d.slow)
    } else {
        String::new()
    };
    format!(
        "{} {:<9} ok {:>3}  failed {:>3}{slow}  rejected {:>3}  in flight {}",
        guard.system(),
        guard.breaker().state().as_str(),
        d.ok,
        d.bad(),
        d.rejected,
        guard.in_flight()
    )
}

pub(super) async fn ticker(world: Arc<World>, stats: Arc<LoadStats>) {
    let mut interval = tokio::time::interval(Duration::from_secs(1));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval.tick().await;
    let mut sber_last = Default::default();
    let mut customer_last = Default::default();
    loop {
        interval.tick().await;
        let at = world.recorder.start().elapsed();
        let tick = stats.tick();
        let sber = system_column(&world, world.container.sber.system_guard(), &mut sber_last);
        let customer = system_column(
            &world,
            world.container.customers.system_guard(),
            &mut customer_last,
        );
        println!(
            "{:>6.2}s  {:<9} │ {sber} │ {customer} │ http {:>3} req/s  p50 {:>5}  p99 {:>5}",
            at.as_secs_f64(),
            world.phase().1,
            tick.requests,
            format_duration(tick.p50),
            format_duration(tick.p99),
        );
    }
}

pub(super) fn summary(world: &World, stats: &LoadStats, checks: &[Check], elapsed: Duration) {
    println!();
    println!("── summary: {:.1}s ──", elapsed.as_secs_f64());
    println!("phases:");
    let log = world
        .phase_log
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for (i, (name, start)) in log.iter().enumerate() {
        let end = log.get(i + 1).map_or(elapsed, |(_, next)| *next);
        println!(
            "  {:<10} {:>6.2}s → {:>6.2}s  ({:.1}s)",
            name,
            start.as_secs_f64(),
            end.as_secs_f64(),
            end.saturating_sub(*start).as_secs_f64()
        );
    }
    println!("guarded calls:");
    for guard in world.container.guards.iter() {
        let c = world.recorder.counts(guard.system());
        println!(
            "  {:<8} ok {}, failed {} (of which slow {}, timed out {}), rejected {}; breaker now {}",
            guard.system(),
            c.ok,
            c.bad(),
            c.slow,
            c.timeout,
            c.rejected,
            guard.breaker().state()
        );
    }
    println!(
        "the service's answers ({} requests):",
        stats.sent().min(stats.statuses().values().sum())
    );
    for (route, n) in stats.statuses() {
        println!("  {route:<34} × {n}");
    }
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
    println!("operator routes and metrics, on the admin listener only:");
    println!("  curl -s  {admin}/metrics");
    println!("  curl -s -XPOST {admin}/admin/breakers/sber/force_open   # or disable, reset");
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
    println!("Ctrl-C stops.");
}
