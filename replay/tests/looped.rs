//! `Replay::looped`: callers in a closed loop against an upstream whose answers depend
//! on its own state, each call's record checked against the answers worked out by hand.

use std::time::Duration;

use outbound_guard_replay::{Fate, Recorded, Replay};
use outbound_guard_settings::Settings;

const MS: u64 = 1000;

/// A FIFO queue in front of `workers` workers of `service` each: a call that reaches
/// it `at` is answered when the earliest free worker has served it, whether or not
/// its caller is still there.
fn queue(
    workers: usize,
    service: Duration,
) -> impl FnMut(Duration, usize) -> Result<Duration, Duration> {
    let mut free = vec![Duration::ZERO; workers];
    move |at, _in_flight| {
        let worker = free.iter_mut().min().expect("a worker");
        *worker = (*worker).max(at) + service;
        Ok(*worker - at)
    }
}

fn settings(toml: &str) -> Settings {
    Settings::parse(toml, "resilience.toml").expect("valid settings")
}

/// One worker of 100 ms, two callers, cut at 150 ms: the call cut keeps its worker, so
/// every call after the first waits for the work of a caller who left. By hand:
/// A at 0 is served 0–100; B at 0 waits for 100–200 and is cut at 150; A again at 100
/// waits for 200–300, cut at 250; B again at 150 waits for 300–400, cut at 300; …
#[test]
fn a_call_cut_at_the_total_timeout_keeps_its_worker() {
    let settings = settings(
        "[systems.sber]\nconnect_timeout = \"10ms\"\nread_timeout = \"140ms\"\ntotal_timeout = \"150ms\"\n",
    );
    let sber = settings.system("sber").unwrap();
    let mut upstream = queue(1, Duration::from_millis(100));
    let pause = Duration::from_millis(10);
    let replay = Replay::looped(sber, &mut upstream, 2, Duration::from_millis(400), pause);
    let made: Vec<(u64, u64, Recorded)> = replay
        .calls
        .iter()
        .map(|c| (c.start / MS, u64::from(c.duration) / MS, c.outcome))
        .collect();
    assert_eq!(
        made,
        [
            (0, 100, Recorded::Success),
            (0, 150, Recorded::Timeout),
            (100, 150, Recorded::Timeout),
            (150, 150, Recorded::Timeout),
            (250, 150, Recorded::Timeout),
            (300, 150, Recorded::Timeout),
        ]
    );
    // Each reached the upstream as it started (the bulkhead had room), and its
    // record's times say so.
    for (call, (&(answered, began), fate)) in replay
        .calls
        .iter()
        .zip(replay.times.iter().zip(&replay.fates))
    {
        assert_eq!(*fate, Fate::Ran);
        assert_eq!(began, call.start);
        assert_eq!(answered, call.start + u64::from(call.duration));
    }
    assert!(replay.transitions.is_empty(), "{:?}", replay.transitions);
    // A fixed bulkhead: its limit, once.
    assert_eq!(replay.limits, [(0, 8)]);
}

/// The breaker opens on failing answers, and a refused caller calls again `pause`
/// later (never at the same instant), each refusal recorded as `rejected`.
#[test]
fn a_refused_caller_calls_again_after_the_pause() {
    let settings = settings("[systems.sber]\ncb_min_calls = 2\ncb_window_size = 2\n");
    let sber = settings.system("sber").unwrap();
    let mut failing = |_at: Duration, _in_flight: usize| Err(Duration::from_millis(5));
    let pause = Duration::from_millis(10);
    let replay = Replay::looped(sber, &mut failing, 1, Duration::from_millis(100), pause);
    let made: Vec<(u64, Recorded, Fate)> = replay
        .calls
        .iter()
        .zip(&replay.fates)
        .map(|(c, f)| (c.start / MS, c.outcome, *f))
        .collect();
    let mut expected = vec![
        (0, Recorded::Failure, Fate::Ran),
        (5, Recorded::Failure, Fate::Ran),
    ];
    expected.extend(
        (10..100)
            .step_by(10)
            .map(|at| (at, Recorded::Rejected, Fate::Refused)),
    );
    assert_eq!(made, expected);
    assert_eq!(replay.transitions.len(), 1, "{:?}", replay.transitions);
    assert_eq!(replay.transitions[0].at, 10 * MS);
}

/// An upstream that answers at once, or never, ends: the clock moves a microsecond
/// after a call that took no time, and a call never answered is cut at
/// `total_timeout`.
#[test]
fn answers_at_once_or_never_still_end() {
    let settings = settings("[systems.sber]\n");
    let sber = settings.system("sber").unwrap();
    let mut at_once = |_at: Duration, _in_flight: usize| Ok(Duration::ZERO);
    let replay = Replay::looped(
        sber,
        &mut at_once,
        1,
        Duration::from_millis(1),
        Duration::ZERO,
    );
    assert_eq!(replay.calls.len(), 1000);
    assert!(replay
        .calls
        .iter()
        .all(|c| c.outcome == Recorded::Success && c.duration == 0));

    let mut never = |_at: Duration, _in_flight: usize| Ok(Duration::MAX);
    let replay = Replay::looped(sber, &mut never, 2, Duration::from_secs(1), Duration::ZERO);
    let total = u32::try_from(sber.total_timeout().as_micros()).unwrap();
    assert_eq!(replay.calls.len(), 2);
    for call in &replay.calls {
        assert_eq!((call.outcome, call.duration), (Recorded::Timeout, total));
    }
}

/// `in_flight` counts the calls let run and neither answered nor cut.
#[test]
fn in_flight_counts_the_calls_at_the_upstream() {
    let settings = settings("[systems.sber]\n");
    let sber = settings.system("sber").unwrap();
    let mut seen = Vec::new();
    let mut upstream = |at: Duration, in_flight: usize| {
        seen.push((at.as_millis(), in_flight));
        Ok(Duration::from_millis(100))
    };
    Replay::looped(
        sber,
        &mut upstream,
        3,
        Duration::from_millis(150),
        Duration::ZERO,
    );
    assert_eq!(seen, [(0, 0), (0, 1), (0, 2), (100, 0), (100, 1), (100, 2)]);
}

/// Durations the clock cannot reach neither panic nor wedge the replay: a refused
/// caller whose pause never ends calls no more, and a span that never ends makes no
/// call.
#[test]
fn a_pause_or_a_span_past_the_clocks_reach_ends() {
    let settings = settings("[systems.sber]\ncb_min_calls = 2\ncb_window_size = 2\n");
    let sber = settings.system("sber").unwrap();
    let mut failing = |_at: Duration, _in_flight: usize| Err(Duration::from_millis(5));
    let replay = Replay::looped(sber, &mut failing, 1, Duration::from_secs(1), Duration::MAX);
    let outcomes: Vec<Recorded> = replay.calls.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [Recorded::Failure, Recorded::Failure, Recorded::Rejected]
    );
    let replay = Replay::looped(sber, &mut failing, 3, Duration::MAX, Duration::ZERO);
    assert!(replay.calls.is_empty());
}

/// A guard's own timer fires at its instant, even where a call ends a millisecond
/// after it: one permit, `bulkhead_wait` 50 ms, an upstream answering in 51 ms. By
/// hand: A holds the permit 0–51 and again 51–102; B, waiting since 0, is refused at
/// 50, calls again 10 ms later (60) and has the permit when A's call ends (102–153);
/// A, waiting since 102, is refused at 152.
#[test]
fn a_guards_timer_fires_at_its_instant() {
    let settings = settings(
        "[systems.sber]\nmax_connections = 1\nmax_keepalive = 2\nbulkhead_wait = \"50ms\"\n",
    );
    let sber = settings.system("sber").unwrap();
    assert_eq!(sber.bulkhead_permits(), 1);
    let mut upstream = |_at: Duration, _in_flight: usize| Ok(Duration::from_millis(51));
    let pause = Duration::from_millis(10);
    let replay = Replay::looped(sber, &mut upstream, 2, Duration::from_millis(110), pause);
    let made: Vec<(u64, u64, Fate)> = replay
        .calls
        .iter()
        .zip(&replay.fates)
        .map(|(c, f)| (c.start, u64::from(c.duration), *f))
        .collect();
    assert_eq!(
        made,
        [
            (0, 51 * MS, Fate::Ran),
            (0, 50 * MS, Fate::BulkheadFull),
            (51 * MS, 51 * MS, Fate::Ran),
            (60 * MS, 93 * MS, Fate::Ran),
            (102 * MS, 50 * MS, Fate::BulkheadFull),
        ]
    );
}

/// docs/replay.md's example, as written there (its lines are held to this test by
/// `examples/replay-check/tests/page.rs`): 8 workers of 100 ms behind a queue, 32
/// callers for a minute, the guide's defaults (8 permits). The workers serve 80 calls a
/// second; each call, from its caller's start, takes its turn behind the 24 other
/// callers: 400 ms once the loop is steady.
#[test]
fn the_docs_queue_of_8_workers_serves_80_calls_a_second() {
    let settings = settings("[systems.sber]\n");
    let sber = settings.system("sber").unwrap();
    let mut free = [Duration::ZERO; 8]; // when each of 8 workers is next free
    let mut queue = |at: Duration, _in_flight: usize| {
        let worker = free.iter_mut().min().unwrap();
        *worker = (*worker).max(at) + Duration::from_millis(100);
        Ok(*worker - at)
    };
    let (span, pause) = (Duration::from_secs(60), Duration::from_millis(10));
    let replay = Replay::looped(sber, &mut queue, 32, span, pause);
    assert!(replay.calls.iter().all(|c| c.outcome == Recorded::Success));
    // The 32 at once, then 8 every 100 ms, for 60 s.
    assert_eq!(replay.calls.len(), 32 + 599 * 8);
    let steady = replay.calls.iter().filter(|c| c.start >= 1_000 * MS);
    assert!(steady.clone().all(|c| c.duration == 400_000));
    assert_eq!(steady.count(), 59 * 80);
}
