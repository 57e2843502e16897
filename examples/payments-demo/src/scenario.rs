//! The scenario `cargo run -p payments-demo` plays: fake Sber and customer servers, the
//! service between them, load over real HTTP, and Sber's faults switched phase by
//! phase while the breaker's states are reported live.
//!
//! Phases: healthy → Sber fails half its calls (the breaker opens, callers get fast
//! 503s and 409s) → half-open trials fail while Sber is still down → Sber heals and the
//! trials close it → Sber turns slow, between `cb_slow_threshold` and the timeouts (the
//! breaker opens near the slow threshold, before any timeout) → Sber heals → Sber hangs
//! (accepts, never answers: the breaker opens near the slow threshold again, while the
//! hung calls are still running) → Sber heals → closed again. The customer system stays
//! healthy, and its breaker closed, throughout.
//!
//! The same load and the same fault schedule drive, at the same time, a twin of the
//! service whose adapters have no guard ([`unguarded`]), with fakes of its own: the
//! summary sets the two side by side.
//!
//! Each phase ends on the transition it waits for (with a generous timeout), not on a
//! fixed sleep, so a busy machine only makes the run a little longer.

pub mod env;
pub mod load;
mod reload;
mod report;
pub mod unguarded;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use outbound_guard::{Settings, State, SystemSettings};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::bootstrap::Container;
use crate::fakes::{self, FakeUpstream, Faults};
use load::{Load, LoadConfig, LoadStats};
use outbound_guard_tests::recorder::{Recorded, Recorder};
pub use report::{format_duration, Check};

/// The longest the scenario may run; CI runs it on two busy cores.
pub const MAX_RUN: Duration = Duration::from_secs(55);

/// The longest the servers may take to drain their requests in flight at the end
/// (a call is bounded by its `total_timeout`, 2 s in the demo); past it they are cut.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// What the scenario is started with: the settings (loaded after [`env::apply`]) and
/// the three listeners, bound before the settings so the fakes' URLs could go into
/// the environment.
#[derive(Debug)]
pub struct Setup {
    /// The service's settings.
    pub settings: Settings,
    /// The variables in effect, for the header.
    pub env: Vec<env::EnvSetting>,
    /// The fake Sber's listener.
    pub sber: std::net::TcpListener,
    /// The fake customer system's listener.
    pub customer: std::net::TcpListener,
    /// The service's listener.
    pub service: std::net::TcpListener,
    /// The admin listener (operator routes and metrics), on 127.0.0.1.
    pub admin: std::net::TcpListener,
}

/// How the scenario ended.
#[derive(Debug)]
pub struct Ending {
    /// Every check, passed or not.
    pub checks: Vec<Check>,
    /// How long it ran.
    pub elapsed: Duration,
}

impl Ending {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.passed)
    }
}

fn listener(std: std::net::TcpListener) -> std::io::Result<TcpListener> {
    std.set_nonblocking(true)?;
    TcpListener::from_std(std)
}

/// The unguarded twin: the same service over adapters without a guard, with fakes of
/// its own, under the same load and the same faults.
struct Twin {
    sber: FakeUpstream,
    _customer: FakeUpstream,
    url: String,
}

/// A phase as the summary reports it.
#[derive(Debug, Clone, Copy)]
struct PhaseEntry {
    name: &'static str,
    /// When it began, from the start.
    at: Duration,
    /// Requests that had reached the guarded service's Sber, and the twin's, by then.
    sber_hits: (u64, u64),
}

/// The running pieces.
struct World {
    recorder: Arc<Recorder>,
    container: Container,
    sber: FakeUpstream,
    customer: FakeUpstream,
    service_url: String,
    twin: Twin,
    /// The load on the guarded service, and on the twin.
    loads: (Arc<LoadStats>, Arc<LoadStats>),
    admin_url: String,
    phase: std::sync::Mutex<(usize, &'static str)>,
    phase_log: std::sync::Mutex<Vec<PhaseEntry>>,
    deadline: Instant,
}

/// Sber's faults, set on the guarded service's Sber and the twin's alike.
struct Schedule(Vec<Arc<Faults>>);

impl Schedule {
    fn set_fail_share(&self, share: f64) {
        self.0.iter().for_each(|f| f.set_fail_share(share));
    }

    fn set_latency(&self, latency: Duration) {
        self.0.iter().for_each(|f| f.set_latency(latency));
    }

    fn heal(&self) {
        self.0.iter().for_each(|f| f.heal());
    }
}

/// A Sber that hangs: answers after an hour, long after every timeout.
pub const HANG: Duration = Duration::from_secs(3600);

impl World {
    /// The settings file in effect (the mounted one, or the compiled-in one's source).
    /// The settings file in effect, as a path to read: the mounted file, or the demo's
    /// own file, compiled in (which `origin()` names relative to the crate).
    fn sber_origin(&self) -> String {
        if self.container.watcher.is_some() {
            self.container.settings_origin.clone()
        } else {
            concat!(env!("CARGO_MANIFEST_DIR"), "/resilience.toml").to_owned()
        }
    }

    fn sber_settings(&self) -> std::sync::Arc<SystemSettings> {
        self.container.sber.system_guard().settings()
    }

    fn enter(&self, name: &'static str, what: &str) {
        let mut phase = self
            .phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        phase.0 += 1;
        phase.1 = name;
        self.recorder.set_phase(phase.0);
        self.loads.0.set_phase(phase.0);
        self.loads.1.set_phase(phase.0);
        let at = self.recorder.start().elapsed();
        self.phase_log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(PhaseEntry {
                name,
                at,
                sber_hits: (self.sber.faults().hits(), self.twin.sber.faults().hits()),
            });
        println!("{:>6.2}s  ── {name}: {what}", at.as_secs_f64());
    }

    fn phase(&self) -> (usize, &'static str) {
        *self
            .phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The name of phase `n` (1 for the first entered; 0 before any).
    fn phase_name(&self, n: usize) -> &'static str {
        let log = self
            .phase_log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        n.checked_sub(1)
            .and_then(|i| log.get(i))
            .map_or("starting", |entry| entry.name)
    }

    /// Waits for `system` to go `from` → `to`, at most `timeout` (and never past the
    /// run's deadline); records the check either way.
    async fn expect(
        &self,
        checks: &mut Vec<Check>,
        cursor: &mut usize,
        what: &str,
        (system, from, to): (&str, State, State),
        timeout: Duration,
    ) -> Result<Recorded, ()> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let timeout = timeout.min(left);
        if let Some((t, next)) = self
            .recorder
            .wait_for(system, from, to, *cursor, timeout)
            .await
        {
            *cursor = next;
            let at = t.at.saturating_duration_since(self.recorder.start());
            checks.push(Check::pass(
                format!("{system} {from} → {to}: {what}"),
                format!("at {:.2}s", at.as_secs_f64()),
            ));
            Ok(t)
        } else {
            let mut detail = format!(
                "not seen within {:.1}s (phase `{}`)",
                timeout.as_secs_f64(),
                self.phase().1
            );
            let counts = self.recorder.counts_of(system);
            if counts.total() == 0 {
                let _ = write!(
                    detail,
                    "; no guarded `{system}` call was observed at all: is `#[circuit_breaker]` expanding on the adapter's methods?"
                );
            } else {
                let _ = write!(
                    detail,
                    "; {system} calls so far: ok {}, failed {}, slow {}, timed out {}, rejected {}",
                    counts.success,
                    counts.failure,
                    counts.slow,
                    counts.timeout,
                    counts.rejected()
                );
            }
            checks.push(Check::fail(
                format!("{system} {from} → {to}: {what}"),
                detail,
            ));
            Err(())
        }
    }

    async fn hold(&self, duration: Duration) {
        let until = (Instant::now() + duration).min(self.deadline);
        tokio::time::sleep_until(until).await;
    }
}

/// The slow phase's latency: above `cb_slow_threshold` by a quarter of the gap to the
/// first timeout (read or total), so each slow call is caught as slow (a busy machine
/// only adds to it) and has most of the gap left before any timeout.
pub fn slow_latency(settings: &SystemSettings) -> Duration {
    let threshold = settings.cb_slow_threshold();
    let limit = settings.read_timeout().min(settings.total_timeout());
    threshold + limit.saturating_sub(threshold) / 4
}

/// The environment variable naming the file the demo records its guarded calls to
/// (`outbound_guard_recorder`), for `outbound-guard replay`.
pub const RECORD_VARIABLE: &str = "DEMO_RECORD";

/// The call recorder `DEMO_RECORD` asks for (the file is started afresh), if it does.
fn record_calls() -> std::io::Result<Option<Arc<outbound_guard_recorder::Recorder>>> {
    let Some(path) = std::env::var_os(RECORD_VARIABLE) else {
        return Ok(None);
    };
    // A fresh recording: a second run does not append to the first.
    let _ = std::fs::remove_file(&path);
    let recorder = outbound_guard_recorder::Recorder::to_file(
        std::path::PathBuf::from(path),
        outbound_guard_recorder::RecorderOptions::default(),
    )?;
    Ok(Some(Arc::new(recorder)))
}

/// Resolves once `stop` says so: every server's graceful-shutdown trigger.
async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Resolves with the signal's name once SIGTERM or SIGINT has come.
async fn interrupted(mut signal: watch::Receiver<Option<&'static str>>) -> &'static str {
    match signal.wait_for(Option::is_some).await {
        Ok(name) => name.unwrap_or("signal"),
        // The watcher is gone: no signal will come.
        Err(_) => std::future::pending().await,
    }
}

/// Plays the scenario; with `serve`, keeps everything running afterwards until SIGTERM
/// or SIGINT. Either signal during the scenario ends it early (as failed). Every
/// server then shuts down gracefully: the requests in flight are answered first.
///
/// # Errors
///
/// If the signal handlers cannot be installed, the recording ([`RECORD_VARIABLE`])
/// cannot be created, or a listener cannot be set up.
pub async fn run(setup: Setup, serve: bool) -> std::io::Result<Ending> {
    let (signal_tx, signal_rx) = watch::channel(None);
    let signal = crate::bootstrap::shutdown_signal()?;
    let signal_task = tokio::spawn(async move {
        let name = signal.await;
        let _ = signal_tx.send(Some(name));
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
    let printer = tokio::spawn(async move {
        while let Some(line) = lines_rx.recv().await {
            println!("{line}");
        }
    });
    let recorder = Arc::new(Recorder::new(Some(lines_tx)));
    let calls = record_calls()?;
    let mut observers: Vec<Arc<dyn outbound_guard::Observer>> = vec![recorder.clone()];
    if let Some(calls) = &calls {
        observers.push(calls.clone());
    }
    let container = match Container::build(&setup.settings, observers) {
        Ok(c) => c,
        Err(e) => return Err(std::io::Error::other(e.to_string())),
    };
    let sber = fakes::sber(listener(setup.sber)?)?;
    let customer = fakes::customer(listener(setup.customer)?)?;
    let service = listener(setup.service)?;
    let service_url = format!("http://{}", service.local_addr()?);
    let router = container.router();
    let stop = stopped(stop_rx.clone());
    let service_task = tokio::spawn(async move {
        let _ = crate::bootstrap::serve_until(service, router, stop).await;
    });
    let admin = listener(setup.admin)?;
    let admin_url = format!("http://{}", admin.local_addr()?);
    let admin_router = container.admin_router();
    let stop = stopped(stop_rx.clone());
    let admin_task = tokio::spawn(async move {
        let _ = crate::bootstrap::serve_until(admin, admin_router, stop).await;
    });

    // The unguarded twin, on ephemeral ports of 127.0.0.1 too.
    let twin_sber = fakes::sber(fakes::bind().await?)?;
    let twin_customer = fakes::customer(fakes::bind().await?)?;
    let twin_listener = fakes::bind().await?;
    let twin_url = format!("http://{}", twin_listener.local_addr()?);
    let twin_router = unguarded::router(&setup.settings, twin_sber.url(), twin_customer.url());
    let stop = stopped(stop_rx);
    let twin_task = tokio::spawn(async move {
        let _ = crate::bootstrap::serve_until(twin_listener, twin_router, stop).await;
    });

    report::header(
        &setup.env,
        &container,
        &sber,
        &customer,
        &service_url,
        &twin_url,
    );

    let deadline = recorder.start() + MAX_RUN;
    let config = |base_url: &str| LoadConfig {
        base_url: base_url.to_owned(),
        order_workers: 6,
        customer_workers: 2,
        // Per service about 60 orders and 20 customer reads a second: light for a
        // debug build on a busy two-core machine (twice over: the twin takes as much).
        pace: Duration::from_millis(100),
        deadline,
        max_requests: 60_000,
    };
    let load = Load::start(config(&service_url));
    let twin_load = Load::start(config(&twin_url));
    let world = Arc::new(World {
        recorder: Arc::clone(&recorder),
        container,
        sber,
        customer,
        service_url,
        twin: Twin {
            sber: twin_sber,
            _customer: twin_customer,
            url: twin_url,
        },
        loads: (Arc::clone(load.stats()), Arc::clone(twin_load.stats())),
        admin_url,
        phase: std::sync::Mutex::new((0, "starting")),
        phase_log: std::sync::Mutex::default(),
        deadline,
    });
    let ticker = tokio::spawn(report::ticker(Arc::clone(&world)));

    let mut checks = Vec::new();
    tokio::select! {
        _ = drive(&world, &mut checks) => {}
        name = interrupted(signal_rx.clone()) => {
            println!("{name}: ending the scenario early; draining the requests in flight");
            checks.push(Check::new(false, "the scenario ran to its end", format!("stopped by {name}")));
        }
    }

    let (stats, _) = tokio::join!(load.stop(), twin_load.stop());
    ticker.abort();
    let elapsed = recorder.start().elapsed();
    final_checks(&world, &stats, &mut checks);
    admin_checks(&world, &mut checks).await;
    // Let the printer drain the last transition lines before the summary.
    tokio::time::sleep(Duration::from_millis(50)).await;
    report::summary(&world, &stats, &checks, elapsed);
    if let Some(calls) = &calls {
        calls.flush();
        let stats = calls.stats();
        println!(
            "recorded {} calls and transitions to {} ({} dropped): replay them with `outbound-guard replay {}`",
            stats.written,
            calls.path().display(),
            stats.dropped_queue_full + stats.dropped_write_error,
            calls.path().display()
        );
    }
    let outcome = Ending { checks, elapsed };

    if serve && signal_rx.borrow().is_none() {
        world.sber.faults().heal();
        world.twin.sber.faults().heal();
        report::serving(&world);
        let name = interrupted(signal_rx).await;
        println!("{name}: stopping; draining the requests in flight");
    }
    // Graceful shutdown: stop accepting, answer what is in flight, then return.
    let _ = stop_tx.send(true);
    let drain_started = Instant::now();
    let mut cut = 0;
    for mut task in [service_task, admin_task, twin_task] {
        let left = DRAIN_LIMIT.saturating_sub(drain_started.elapsed());
        if tokio::time::timeout(left, &mut task).await.is_err() {
            task.abort();
            cut += 1;
        }
    }
    if cut > 0 {
        println!(
            "{cut} server(s) still had requests in flight after {}; cut short",
            format_duration(DRAIN_LIMIT)
        );
    }
    signal_task.abort();
    printer.abort();
    Ok(outcome)
}

/// The admin listener as an operator and a scraper meet it: the metrics scrape needs
/// no token; a control action without the token is refused and changes nothing.
async fn admin_checks(world: &World, checks: &mut Vec<Check>) {
    let client = match reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            checks.push(Check::new(
                false,
                "an HTTP client for the admin checks",
                e.to_string(),
            ));
            return;
        }
    };
    let admin = &world.admin_url;
    let status =
        |r: Result<reqwest::Response, reqwest::Error>| r.map_or(0, |r| r.status().as_u16());
    let scrape = status(client.get(format!("{admin}/metrics")).send().await);
    checks.push(Check::new(
        scrape == 200,
        "the metrics scrape needs no token",
        format!("GET /metrics → {scrape}"),
    ));
    let before = world.container.sber.system_guard().breaker().state();
    let anonymous = status(
        client
            .post(format!("{admin}/admin/breakers/sber/force_open"))
            .send()
            .await,
    );
    let after = world.container.sber.system_guard().breaker().state();
    let expected = if world.container.admin_token.is_some() {
        401
    } else {
        403
    };
    let mut detail = format!("anonymous force_open → {anonymous}, sber {before:?} → {after:?}");
    let mut passed = anonymous == expected && before == after;
    if let Some(token) = &world.container.admin_token {
        // With the operator's token the same action goes through; reset after it.
        let forced = status(
            client
                .post(format!("{admin}/admin/breakers/sber/force_open"))
                .bearer_auth(token)
                .send()
                .await,
        );
        let state = world.container.sber.system_guard().breaker().state();
        let reset = status(
            client
                .post(format!("{admin}/admin/breakers/sber/reset"))
                .bearer_auth(token)
                .send()
                .await,
        );
        passed &= forced == 200 && state == State::ForcedOpen && reset == 200;
        let _ = write!(
            detail,
            "; with the token force_open → {forced} ({state:?}), reset → {reset}"
        );
    }
    checks.push(Check::new(
        passed,
        "operator controls refuse a request without the admin token",
        detail,
    ));
}

/// The phases, each ended by the transition it waits for.
async fn drive(world: &World, checks: &mut Vec<Check>) -> Result<(), ()> {
    let s = world.sber_settings().clone();
    let open = s.cb_open_duration();
    let trip = Duration::from_secs(15);
    let reopen = open + Duration::from_secs(10);
    let trials = Duration::from_secs(10);
    let faults = Schedule(vec![
        Arc::clone(world.sber.faults()),
        Arc::clone(world.twin.sber.faults()),
    ]);
    let mut cursor = 0;
    let sber = "sber";

    world.enter("healthy", "Sber and the customer system answer normally");
    world.hold(Duration::from_secs(4)).await;

    world.enter("failing", "Sber fails every second call with HTTP 500");
    faults.set_fail_share(0.5);
    world
        .expect(
            checks,
            &mut cursor,
            "opened on the failure rate while Sber failed",
            (sber, State::Closed, State::Open),
            trip,
        )
        .await?;

    world.enter(
        "open",
        "Sber still failing; callers get fast 503 / 409 without reaching it",
    );
    world
        .expect(
            checks,
            &mut cursor,
            "half-open after cb_open_duration",
            (sber, State::Open, State::HalfOpen),
            reopen,
        )
        .await?;
    world
        .expect(
            checks,
            &mut cursor,
            "a trial call failed while Sber was still down",
            (sber, State::HalfOpen, State::Open),
            trials,
        )
        .await?;

    world.enter(
        "healing",
        "Sber healthy again; the next half-open trials decide",
    );
    faults.heal();
    world
        .expect(
            checks,
            &mut cursor,
            "half-open again after cb_open_duration",
            (sber, State::Open, State::HalfOpen),
            reopen,
        )
        .await?;
    world
        .expect(
            checks,
            &mut cursor,
            "closed: every trial call succeeded",
            (sber, State::HalfOpen, State::Closed),
            trials,
        )
        .await?;

    world.enter("recovered", "Sber healthy, breaker closed");
    world.hold(Duration::from_secs(3)).await;

    let latency = slow_latency(&s);
    world.enter(
        "slow",
        &format!(
            "Sber answers in {}: slower than cb_slow_threshold {}, within read_timeout {} and total_timeout {}",
            format_duration(latency),
            format_duration(s.cb_slow_threshold()),
            format_duration(s.read_timeout()),
            format_duration(s.total_timeout())
        ),
    );
    let slow_phase = world.phase().0;
    let before = world.recorder.counts_of(sber);
    let slow_from = Instant::now();
    faults.set_latency(latency);
    let opened = world
        .expect(
            checks,
            &mut cursor,
            "opened on slow calls while Sber was slow",
            (sber, State::Closed, State::Open),
            trip,
        )
        .await?;
    let during = opened.counts.since(&before);
    let bound = s.cb_slow_threshold() + s.bulkhead_wait() + Duration::from_secs(1);
    let after = opened.at.saturating_duration_since(slow_from);
    checks.push(Check::new(
        opened.phase == slow_phase && during.failure == 0 && during.timeout == 0,
        "sber opened on slow calls before any timeout",
        format!(
            "{} after Sber turned slow (cb_slow_threshold {}); before opening: {} slow, {} failed, {} timed out",
            format_duration(after),
            format_duration(s.cb_slow_threshold()),
            during.slow,
            during.failure,
            during.timeout
        ),
    ));
    checks.push(Check::new(
        after <= bound,
        "sber opened near the slow threshold: within cb_slow_threshold + bulkhead_wait + 1s of Sber turning slow",
        format!(
            "{} after Sber turned slow; bound: cb_slow_threshold + bulkhead_wait + 1s = {}",
            format_duration(after),
            format_duration(bound)
        ),
    ));

    world.enter(
        "healing",
        "Sber fast again; the breaker lets trial calls through after cb_open_duration",
    );
    // A moment of fast rejections first, so they show in the per-second lines.
    world.hold(Duration::from_secs(1)).await;
    faults.heal();
    world
        .expect(
            checks,
            &mut cursor,
            "half-open after the slow calls",
            (sber, State::Open, State::HalfOpen),
            reopen,
        )
        .await?;
    world
        .expect(
            checks,
            &mut cursor,
            "closed: Sber answers in time again",
            (sber, State::HalfOpen, State::Closed),
            trials,
        )
        .await?;

    world.enter("recovered", "Sber healthy, breaker closed");
    world.hold(Duration::from_secs(2)).await;

    world.enter(
        "hang",
        &format!(
            "Sber accepts connections and never answers; each call is counted slow at {} while still running, and cut off by read_timeout {}",
            format_duration(s.cb_slow_threshold()),
            format_duration(s.read_timeout())
        ),
    );
    let hang_phase = world.phase().0;
    let hang_from = Instant::now();
    faults.set_latency(HANG);
    let opened = world
        .expect(
            checks,
            &mut cursor,
            "opened while Sber hung",
            (sber, State::Closed, State::Open),
            trip,
        )
        .await?;
    let after = opened.at.saturating_duration_since(hang_from);
    checks.push(Check::new(
        opened.phase == hang_phase && after <= bound && after < s.read_timeout(),
        "sber opened near the slow threshold while Sber hung, with the hung calls still running",
        format!(
            "{} after Sber began to hang; bound: cb_slow_threshold + bulkhead_wait + 1s = {}",
            format_duration(after),
            format_duration(bound)
        ),
    ));

    world.enter(
        "hang, open",
        "Sber still hangs; callers get fast 503 / 409, while the unguarded twin's requests pile up",
    );
    world.hold(open.mul_f64(2.0 / 3.0)).await;
    world.enter(
        "healing",
        "Sber answers again; the breaker lets trial calls through after cb_open_duration",
    );
    faults.heal();
    world
        .expect(
            checks,
            &mut cursor,
            "half-open after the hang",
            (sber, State::Open, State::HalfOpen),
            reopen,
        )
        .await?;
    world
        .expect(
            checks,
            &mut cursor,
            "closed: Sber answers again",
            (sber, State::HalfOpen, State::Closed),
            trials,
        )
        .await?;

    world.enter("recovered", "Sber healthy, breaker closed");
    world.hold(Duration::from_secs(2)).await;

    reload::phase(world, checks, &mut cursor).await?;
    world.hold(Duration::from_secs(1)).await;
    Ok(())
}

/// The reload phase's two steps, named as the other phases are.
fn enter_reload(world: &World, what: &str) {
    world.enter("forced by the file", what);
}

fn enter_back(world: &World, what: &str) {
    world.enter("automatic again", what);
}

/// The checks that look at the whole run.
fn final_checks(world: &World, stats: &load::LoadStats, checks: &mut Vec<Check>) {
    let timeouts = world.recorder.timeouts();
    checks.push(Check::new(
        timeouts == 0,
        "no guarded call ran into a timeout (no Cause::Timeout)",
        format!("{timeouts} timed out"),
    ));
    let sber = world.recorder.counts_of("sber");
    checks.push(Check::new(
        sber.rejected() > 0,
        "callers were rejected fast while the sber breaker was open",
        format!("{} sber calls rejected", sber.rejected()),
    ));
    let statuses = stats.statuses();
    let answered = |key: &str| statuses.get(key).copied().unwrap_or(0);
    let (r503, r409) = (
        answered("POST /orders/{id}/confirm 503"),
        answered("POST /orders 409"),
    );
    checks.push(Check::new(
        r503 > 0 && r409 > 0,
        "the API answered 503 (confirm) and 409 created-not-paid (create) while Sber was unavailable",
        format!("{r503} × 503, {r409} × 409"),
    ));
    let customer = world.recorder.counts_of("customer");
    let moved: Vec<String> = world
        .recorder
        .transitions()
        .iter()
        .filter(|t| t.system == "customer")
        .map(|t| format!("{} → {}", t.from, t.to))
        .collect();
    let customer_state = world.container.customers.system_guard().breaker().state();
    checks.push(Check::new(
        moved.is_empty()
            && customer_state == State::Closed
            && customer.success > 0
            && customer.bad() == 0
            && customer.rejected() == 0,
        "customer untouched: closed throughout, every call succeeded",
        if moved.is_empty() {
            format!(
                "state {customer_state}, ok {}, failed {}, rejected {}",
                customer.success,
                customer.bad(),
                customer.rejected()
            )
        } else {
            format!("transitions: {}", moved.join(", "))
        },
    ));
    let sber_state = world.container.sber.system_guard().breaker().state();
    checks.push(Check::new(
        sber_state == State::Closed,
        "sber closed at the end",
        format!("state {sber_state}"),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_latency_lies_between_the_slow_threshold_and_the_timeouts() {
        let env = [
            ("CLIENT_SBER__CONNECT_TIMEOUT", "0.25"),
            ("CLIENT_SBER__READ_TIMEOUT", "1.2"),
            ("CLIENT_SBER__TOTAL_TIMEOUT", "2"),
        ];
        let settings = crate::bootstrap::load_settings_with(env).unwrap();
        let sber = settings.system("sber").unwrap();
        let latency = slow_latency(sber);
        assert_eq!(sber.cb_slow_threshold(), Duration::from_millis(600));
        assert_eq!(latency, Duration::from_millis(750));
        assert!(latency > sber.cb_slow_threshold() && latency < sber.read_timeout());
    }

    #[test]
    fn the_demo_file_has_sber_critical_and_customer_at_the_default() {
        let settings =
            crate::bootstrap::load_settings_with(std::iter::empty::<(&str, &str)>()).unwrap();
        assert_eq!(settings.system("sber").unwrap().cb_failure_rate(), 0.30);
        assert_eq!(settings.system("customer").unwrap().cb_failure_rate(), 0.5);
        assert_eq!(
            settings.system("sber").unwrap().cb_open_duration(),
            Duration::from_secs(30)
        );
    }
}
