//! The adaptive bulkhead against an upstream of `workers` workers and a queue (a fair
//! semaphore, then the service time): its latency grows with the calls in flight past
//! its workers, as a real one's does. Paused time: minutes of traffic run in a moment,
//! the same way each run.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::{Guard, Settings};

/// The upstream: its workers (resized as its capacity changes), its service time, and
/// whether it answers 5xx at once.
struct Upstream {
    workers: Semaphore,
    capacity: AtomicUsize,
    service_micros: AtomicU64,
    failing: std::sync::atomic::AtomicBool,
}

impl Upstream {
    fn new(workers: usize, service: Duration) -> Arc<Self> {
        Arc::new(Upstream {
            workers: Semaphore::new(workers),
            capacity: AtomicUsize::new(workers),
            service_micros: AtomicU64::new(service.as_micros() as u64),
            failing: false.into(),
        })
    }

    /// Changes the number of workers (one in service finishes its call first).
    fn set_workers(self: &Arc<Self>, workers: usize) {
        let old = self.capacity.swap(workers, Ordering::SeqCst);
        if workers > old {
            self.workers.add_permits(workers - old);
        } else {
            let owed = old - workers - self.workers.forget_permits(old - workers);
            if owed > 0 {
                let upstream = Arc::clone(self);
                tokio::spawn(async move {
                    let owed = u32::try_from(owed).unwrap();
                    upstream.workers.acquire_many(owed).await.unwrap().forget();
                });
            }
        }
    }

    async fn serve(&self) -> Result<(), &'static str> {
        if self.failing.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(1)).await;
            return Err("503");
        }
        let _worker = self.workers.acquire().await.unwrap();
        let service = Duration::from_micros(self.service_micros.load(Ordering::SeqCst));
        tokio::time::sleep(service).await;
        Ok(())
    }
}

/// What the callers saw: successes, and the limit's lowest and highest over a span.
#[derive(Default)]
struct Seen {
    ok: AtomicU64,
    refused: AtomicU64,
    /// Each success's end and its latency from its admission.
    latencies: std::sync::Mutex<Vec<(Instant, Duration)>>,
}

impl Seen {
    /// The successes that ended from `from` to `to`: how many, and their latency's
    /// 99th percentile from admission.
    fn p99(&self, from: Instant, to: Instant) -> (usize, Duration) {
        let mut within: Vec<Duration> = (self.latencies.lock().unwrap().iter())
            .filter(|(end, _)| (from..to).contains(end))
            .map(|&(_, latency)| latency)
            .collect();
        within.sort();
        let at = ((within.len() as f64 - 1.0) * 0.99).round() as usize;
        (within.len(), within[at])
    }

    /// The successes that ended from `from` to `to`, and how many of them queued at
    /// the upstream (above 1.5 times its service time `service` once admitted).
    fn delayed(&self, from: Instant, to: Instant, service: Duration) -> (usize, usize) {
        let latencies = self.latencies.lock().unwrap();
        let within = latencies.iter().filter(|(end, _)| (from..to).contains(end));
        let queued = within.clone().filter(|&&(_, l)| l > service.mul_f64(1.5));
        (within.count(), queued.count())
    }
}

fn guard(toml: &str) -> Guard {
    let settings = Settings::parse(&format!("[systems.sber]\n{toml}\n"), "test").unwrap();
    Guard::new(settings.system("sber").unwrap())
}

/// `callers` tasks calling `upstream` through `guard` in a loop until `until`.
fn drive(
    guard: &Guard,
    upstream: &Arc<Upstream>,
    callers: usize,
    until: Instant,
) -> (Arc<Seen>, Vec<tokio::task::JoinHandle<()>>) {
    let seen = Arc::new(Seen::default());
    let tasks = (0..callers)
        .map(|_| {
            let (guard, upstream, seen) = (guard.clone(), Arc::clone(upstream), Arc::clone(&seen));
            tokio::spawn(async move {
                while Instant::now() < until {
                    let call = async {
                        let admitted = Instant::now();
                        upstream.serve().await.map(|()| admitted.elapsed())
                    };
                    match guard.call(call).await {
                        Ok(Ok(latency)) => {
                            let end = Instant::now();
                            seen.latencies.lock().unwrap().push((end, latency));
                            seen.ok.fetch_add(1, Ordering::SeqCst)
                        }
                        Ok(Err(_)) => 0,
                        Err(_) => {
                            seen.refused.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            0
                        }
                    };
                }
            })
        })
        .collect();
    (seen, tasks)
}

/// The limit's `(lowest, highest)` sampled every 100 ms from `from` to `to`.
async fn limits(guard: &Guard, from: Instant, to: Instant) -> (usize, usize) {
    tokio::time::sleep_until(from).await;
    let (mut low, mut high) = (usize::MAX, 0);
    while Instant::now() < to {
        let limit = guard.bulkhead_limit();
        assert!(
            guard.in_flight() <= 8,
            "never more than the ceiling in flight"
        );
        (low, high) = (low.min(limit), high.max(limit));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (low, high)
}

const ADAPTIVE: &str = "bulkhead = \"adaptive\"";
const MS100: Duration = Duration::from_millis(100);

#[tokio::test(start_paused = true)]
async fn a_capacity_drop_brings_the_limit_to_the_capacity_and_its_return_gives_it_back() {
    let guard = guard(ADAPTIVE);
    let upstream = Upstream::new(8, MS100);
    let t0 = Instant::now();
    let (seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(80));
    let (low, high) = limits(
        &guard,
        t0 + Duration::from_secs(5),
        t0 + Duration::from_secs(20),
    )
    .await;
    assert_eq!(
        (low, high),
        (8, 8),
        "8 workers: the limit stays at the ceiling"
    );
    let before = seen.ok.load(Ordering::SeqCst);
    // 8 workers of 100 ms serve 80 a second: 1,600 calls in 20 s, the slow start's
    // first windows (at 2, then 4 in flight) included.
    assert!(
        before >= 1540,
        "{before} successes in the first 20 s, of 1600"
    );
    upstream.set_workers(2);
    // The calls admitted before a cut queued behind the old limit: they are not
    // samples, so the cut is not cut again on their latency, down to the floor.
    let (cut, _) = limits(
        &guard,
        t0 + Duration::from_secs(20),
        t0 + Duration::from_secs(25),
    )
    .await;
    assert!(cut >= 2, "the drop cut the limit to {cut}");
    let (low, high) = limits(
        &guard,
        t0 + Duration::from_secs(25),
        t0 + Duration::from_secs(60),
    )
    .await;
    assert!(low >= 2 && high <= 3, "2 workers: the limit {low}..={high}");
    let degraded = seen.ok.load(Ordering::SeqCst) - before;
    // 2 workers of 100 ms serve 20 a second: 40 s of it, 800 calls.
    assert!(
        degraded >= 720,
        "{degraded} successes in the degraded phase, of 800"
    );
    // A jump cuts the limit at the drop's first slow call: the calls queued behind the
    // old limit are fewer than 1%, and those after wait for no more than one call.
    let (_, p99) = seen.p99(t0 + Duration::from_secs(20), t0 + Duration::from_secs(60));
    // The drop's first second, and the rest: at the workers but for the probes.
    let at_drop = seen.delayed(
        t0 + Duration::from_secs(20),
        t0 + Duration::from_secs(21),
        MS100,
    );
    let after = seen.delayed(
        t0 + Duration::from_secs(21),
        t0 + Duration::from_secs(60),
        MS100,
    );
    eprintln!(
        "8 workers: {before} of 1600 served; 2 workers: p99 once admitted {p99:?}, \
         (served, queued) in the drop's first second {at_drop:?}, after it {after:?}"
    );
    assert!(p99 <= 2 * MS100, "p99 once admitted {p99:?}");
    upstream.set_workers(8);
    let back = t0 + Duration::from_secs(60);
    while guard.bulkhead_limit() < 8 {
        tokio::time::sleep(MS100).await;
    }
    let settled = Instant::now() - back;
    eprintln!(
        "2 workers: limit {low}..={high}, {degraded} of 800 served; back to 8 in {settled:?}"
    );
    assert!(
        settled <= Duration::from_secs(10),
        "capacity given back after {settled:?}"
    );
    for task in tasks {
        task.await.unwrap();
    }
    // 8 workers again for 20 s (1,600 calls): the next probe finds them. At worst the
    // return comes just after a probe failed: 100 successes at 2 workers' 20 a second
    // and 1.1 s of ramp, 6.3 s without the 60 calls a second more.
    let (again, _) = seen.delayed(back, back + Duration::from_secs(20), MS100);
    eprintln!("8 workers again: {again} of 1600 served");
    assert!(again >= 1200, "{again} of 1600");
    assert_eq!(guard.breaker().state(), crate::State::Closed);
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn an_upstream_slow_for_ten_minutes_keeps_the_limit_low_without_drifting_back() {
    // The baseline is learned at 100 ms, then the upstream's service takes 2.5 times
    // that for ten minutes, with workers enough for every call (no queue the limit
    // could drain): only a baseline that ratchets up would let the limit climb back.
    let guard = guard(ADAPTIVE);
    let upstream = Upstream::new(64, MS100);
    let t0 = Instant::now();
    let minutes = |m: u64| t0 + Duration::from_secs(60 * m);
    let (_seen, tasks) = drive(&guard, &upstream, 32, minutes(11));
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(guard.bulkhead_limit(), 8);
    upstream.service_micros.store(250_000, Ordering::SeqCst);
    let (low, high) = limits(&guard, t0 + Duration::from_secs(40), minutes(11)).await;
    eprintln!("slow for ten minutes: the limit {low}..={high}");
    assert_eq!(low, 1, "the limit came down to its floor");
    assert!(
        high <= 4,
        "the limit crept back up to {high} in ten minutes"
    );
    assert_eq!(
        guard.bulkhead_limit(),
        1,
        "and is at the floor after ten minutes"
    );
    for task in tasks {
        task.await.unwrap();
    }
}

/// The limit's changes from now to `to`, watched every 10 ms: `(when, limit)`, the
/// limit as it was at the start first.
async fn watch(guard: &Guard, to: Instant) -> Vec<(Instant, usize)> {
    let mut seen = vec![(Instant::now(), guard.bulkhead_limit())];
    while Instant::now() < to {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let limit = guard.bulkhead_limit();
        if seen.last().map(|&(_, l)| l) != Some(limit) {
            seen.push((Instant::now(), limit));
        }
    }
    seen
}

/// The probes in `changes` (a limit of `workers + 1` over `workers`): when each started.
fn probes(changes: &[(Instant, usize)], workers: usize) -> Vec<Instant> {
    (changes.windows(2))
        .filter(|w| (w[0].1, w[1].1) == (workers, workers + 1))
        .map(|w| w[1].0)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_steady_upstream_holds_the_limit_at_its_workers_with_rare_one_permit_probes() {
    // Fewer workers than the ceiling of 8: the limit settles at the workers, where no
    // call queues, and stays there ten minutes long but for probes of one permit
    // more, which go back at the first call that queued. Their back-off keeps the
    // calls that queued under one in a hundred.
    for workers in [2, 3, 4, 6] {
        let guard = guard(ADAPTIVE);
        let upstream = Upstream::new(workers, MS100);
        let t0 = Instant::now();
        let (from, end) = (t0 + Duration::from_secs(30), t0 + Duration::from_secs(630));
        let (seen, tasks) = drive(&guard, &upstream, 32, end);
        tokio::time::sleep_until(from).await;
        let changes = watch(&guard, end).await;
        let low = changes.iter().map(|&(_, l)| l).min().unwrap();
        let high = changes.iter().map(|&(_, l)| l).max().unwrap();
        // The time at the workers' limit, the rest probing.
        let at_workers: Duration = (changes.iter().zip(changes.iter().skip(1)))
            .chain([(changes.last().unwrap(), &(end, 0))])
            .filter(|((_, l), _)| *l == workers)
            .map(|((at, _), (next, _))| *next - *at)
            .sum();
        let probed = probes(&changes, workers).len();
        let (served, queued) = seen.delayed(from, end, MS100);
        let share = queued as f64 / served as f64;
        eprintln!(
            "{workers} workers: the limit {low}..={high}, at {workers} {at_workers:?} of 600 s, \
             {probed} probes, {queued} of {served} calls queued ({:.2}%)",
            share * 100.0
        );
        assert_eq!((low, high), (workers, workers + 1), "{workers} workers");
        // A probe holds its permit about 0.2 s: a tenth of the time at 6 workers' 60
        // calls a second, a probe every 100 of them.
        assert!(at_workers >= Duration::from_secs(525), "{at_workers:?}");
        // One every 100 successes and a bit (the window before it, its own calls).
        let every = served / probed;
        assert!((100..=120).contains(&every), "a probe every {every} calls");
        assert!(
            share < 0.01,
            "{workers} workers: {queued} of {served} queued"
        );
        // Goodput: the workers' capacity, 10 calls a second each.
        assert!(served as f64 >= 0.97 * 6000.0 * workers as f64, "{served}");
        for task in tasks {
            task.await.unwrap();
        }
    }
}

#[tokio::test(start_paused = true)]
async fn the_probes_back_off_and_find_capacity_back_within_ten_seconds() {
    // Two workers: the slow start's overshoot (4) is cut to 2, each probe fails, and
    // the wait before the next one doubles from 1 s to 5 s (plus a window, and the
    // probe's own calls): 20 to 100 successes.
    let guard = guard(ADAPTIVE);
    let upstream = Upstream::new(2, MS100);
    let t0 = Instant::now();
    let (_seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(150));
    let changes = watch(&guard, t0 + Duration::from_secs(40)).await;
    // The back-off counts successes: 20, 40, 80, then 100; at `rate` calls a second.
    let backed_off = |starts: &[Instant], rate: u32| {
        let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        eprintln!("between probes: {gaps:?}");
        let expected = [20, 40, 80, 100, 100, 100].map(Duration::from_secs);
        let expected = expected.map(|calls| calls / rate);
        assert!(gaps.len() >= expected.len(), "{gaps:?}");
        for (gap, backoff) in gaps.iter().zip(expected) {
            assert!((backoff..backoff + MS100 * 3).contains(gap), "{gaps:?}");
        }
    };
    backed_off(&probes(&changes, 2), 20);
    // The capacity comes back just after a probe failed, with the longest wait ahead:
    // the next probe finds it, the kept probes' steps double (2 → 3 → 5 → 8), and the
    // limit is at the ceiling again within 10 s.
    while guard.bulkhead_limit() != 3 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    while guard.bulkhead_limit() != 2 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    upstream.set_workers(8);
    let back = Instant::now();
    let ramp = watch(&guard, back + Duration::from_secs(15)).await;
    let (full, _) = *ramp.iter().find(|&&(_, l)| l == 8).expect("back at 8");
    let limits: Vec<usize> = ramp.iter().map(|&(_, l)| l).collect();
    eprintln!(
        "capacity back: limit {limits:?} at 8 after {:?}",
        full - back
    );
    assert_eq!(limits, [2, 3, 5, 8]);
    assert!(full - back <= Duration::from_secs(10), "{:?}", full - back);
    // Four workers: a cut to them (8 / 2 = 4 at the first window), then probes of one
    // permit (the kept probes' steps are forgotten at a cut), backing off again.
    upstream.set_workers(4);
    let changes = watch(&guard, Instant::now() + Duration::from_secs(40)).await;
    let limits: Vec<usize> = changes.iter().map(|&(_, l)| l).collect();
    assert_eq!(limits[..3], [8, 4, 5], "{limits:?}");
    assert!(limits[1..].iter().all(|&l| l == 4 || l == 5), "{limits:?}");
    backed_off(&probes(&changes, 4), 40);
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_replica_starts_at_a_quarter_of_its_permits_and_doubles_to_them() {
    // The guide's 8 permits: 2 first, then 4 after a window of ten calls at 2 in flight
    // (0.5 s), then 8 after ten at 4 (0.3 s).
    let guard = guard(ADAPTIVE);
    assert_eq!(guard.bulkhead_limit(), 2);
    let upstream = Upstream::new(8, MS100);
    let t0 = Instant::now();
    let (_seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(3));
    let mut seen = vec![(Duration::ZERO, 2)];
    while Instant::now() < t0 + Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let limit = guard.bulkhead_limit();
        if seen.last().map(|&(_, l)| l) != Some(limit) {
            seen.push((Instant::now() - t0, limit));
        }
    }
    let limits: Vec<usize> = seen.iter().map(|&(_, l)| l).collect();
    assert_eq!(limits, [2, 4, 8], "{seen:?}");
    assert!(seen[2].0 <= Duration::from_millis(900), "{seen:?}");
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn light_traffic_never_fills_the_bulkhead_and_leaves_the_limit_where_it_starts() {
    // One caller at a time: the bulkhead is never full, so fast answers tell nothing
    // about more calls in flight, and the limit stays at its first 2.
    let guard = guard(ADAPTIVE);
    let upstream = Upstream::new(8, MS100);
    let t0 = Instant::now();
    let (seen, tasks) = drive(&guard, &upstream, 1, t0 + Duration::from_secs(60));
    let (low, high) = limits(&guard, t0, t0 + Duration::from_secs(60)).await;
    assert_eq!((low, high), (2, 2));
    assert!(seen.ok.load(Ordering::SeqCst) >= 590);
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_fast_5xx_leaves_the_limit_alone() {
    for workers in [8, 2] {
        let guard = guard(&format!("{ADAPTIVE}\ncb_failure_rate = 1.0"));
        let upstream = Upstream::new(workers, MS100);
        let t0 = Instant::now();
        let (_seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(40));
        tokio::time::sleep(Duration::from_secs(20)).await;
        let before = guard.bulkhead_limit();
        upstream.failing.store(true, Ordering::SeqCst);
        let (low, high) = limits(&guard, Instant::now(), t0 + Duration::from_secs(25)).await;
        assert_eq!((low, high), (before, before), "{workers} workers");
        upstream.failing.store(false, Ordering::SeqCst);
        for task in tasks {
            task.await.unwrap();
        }
    }
}

/// How long after an upstream starts to hang every call is refused at once, through
/// `guard` with the guide's defaults, 32 callers, after `warm` of 2 workers.
async fn time_to_fail_fast(guard: &Guard, warm: Duration) -> Duration {
    let upstream = Upstream::new(2, MS100);
    let t0 = Instant::now();
    let (_seen, tasks) = drive(guard, &upstream, 32, t0 + warm + Duration::from_secs(120));
    tokio::time::sleep(warm).await;
    upstream
        .service_micros
        .store(3_600_000_000, Ordering::SeqCst);
    let hang = Instant::now();
    while guard.breaker().state() != crate::State::Open {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let fast = Instant::now() - hang;
    for task in tasks {
        task.abort();
    }
    fast
}

#[tokio::test(start_paused = true)]
async fn a_hang_fails_fast_no_later_than_with_the_fixed_bulkhead() {
    for warm in [Duration::ZERO, Duration::from_secs(30)] {
        let fixed = time_to_fail_fast(&guard(""), warm).await;
        let adaptive = time_to_fail_fast(&guard(ADAPTIVE), warm).await;
        eprintln!("hang after {warm:?}: open after {fixed:?} fixed, {adaptive:?} adaptive");
        assert!(
            adaptive <= fixed,
            "after {warm:?}: adaptive {adaptive:?}, fixed {fixed:?}"
        );
    }
}

/// Settings of `sber` from `toml`.
fn settings(toml: &str) -> outbound_guard_settings::SystemSettings {
    Settings::parse(&format!("[systems.sber]\n{toml}\n"), "test")
        .unwrap()
        .system("sber")
        .unwrap()
        .clone()
}

#[tokio::test(start_paused = true)]
async fn a_reload_keeps_the_limit_where_the_new_ceiling_allows() {
    let guard = guard(ADAPTIVE);
    let upstream = Upstream::new(2, MS100);
    let t0 = Instant::now();
    let (_seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(30));
    tokio::time::sleep(Duration::from_secs(20)).await;
    let low = guard.bulkhead_limit();
    assert!((2..=3).contains(&low), "{low}");
    // A wider ceiling (16): the limit stays, the permits gauge is the new ceiling.
    guard.apply(&settings(&format!("{ADAPTIVE}\nmax_connections = 20")));
    assert_eq!(
        (guard.bulkhead_limit(), guard.bulkhead_permits()),
        (low, 16)
    );
    assert_eq!(guard.bulkhead().permits(), low);
    // A ceiling under the limit (1): the limit is clamped to it.
    guard.apply(&settings(&format!("{ADAPTIVE}\nmax_connections = 2")));
    assert_eq!((guard.bulkhead_limit(), guard.bulkhead().permits()), (1, 1));
    // Fixed again: the bulkhead is its permits.
    guard.apply(&settings("max_connections = 10"));
    assert_eq!((guard.bulkhead_limit(), guard.bulkhead().permits()), (8, 8));
    // Adaptive again by a reload: the limit in force (the ceiling), kept.
    guard.apply(&settings(ADAPTIVE));
    assert_eq!(guard.bulkhead_limit(), 8);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_guard_made_adaptive_by_a_reload_samples_its_successes_and_one_made_fixed_stops() {
    // Built fixed, without call observers: a call's end has nothing to do.
    let guard = guard("");
    assert!(!guard.ends_watched());
    guard.apply(&settings(ADAPTIVE));
    assert!(guard.ends_watched(), "each success is a sample now");
    let upstream = Upstream::new(8, MS100);
    let t0 = Instant::now();
    let (_seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(50));
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(guard.bulkhead_limit(), 8);
    upstream.set_workers(2);
    tokio::time::sleep(Duration::from_secs(30)).await;
    let low = guard.bulkhead_limit();
    assert!(
        (2..=3).contains(&low),
        "the limit follows the capacity: {low}"
    );
    guard.apply(&settings(""));
    assert!(!guard.ends_watched());
    assert_eq!((guard.bulkhead_limit(), guard.bulkhead().permits()), (8, 8));
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(guard.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn in_observe_mode_the_limit_is_computed_and_the_bulkhead_stays_at_its_permits() {
    let guard = guard(&format!("{ADAPTIVE}\ncb_mode = \"observe\""));
    let upstream = Upstream::new(8, MS100);
    let t0 = Instant::now();
    let (_seen, tasks) = drive(&guard, &upstream, 32, t0 + Duration::from_secs(40));
    tokio::time::sleep(Duration::from_secs(10)).await;
    upstream.set_workers(2);
    let (low, high) = limits(
        &guard,
        t0 + Duration::from_secs(20),
        t0 + Duration::from_secs(40),
    )
    .await;
    assert!(high <= 3, "the limit is computed: {low}..={high}");
    assert_eq!(
        guard.bulkhead().permits(),
        8,
        "and refuses nothing below the ceiling"
    );
    assert_eq!(guard.in_flight(), 8);
    for task in tasks {
        task.await.unwrap();
    }
}

#[test]
fn a_change_reads_in_words() {
    let change = super::Change {
        from: 8,
        to: 4,
        ratio: 2.1,
        baseline: Duration::from_millis(40),
    };
    assert_eq!(
        change.describe("sber"),
        "sber's limit 8 → 4: latency 2.1× its baseline of 40 ms"
    );
    assert!(change.is_jump());
    assert!(!super::Change { to: 7, ..change }.is_jump());
}
