//! The simulation: one system's real guard against a scripted upstream, whose callers
//! are calls replayed by the replay's engine (one drive loop, one observer, one way of
//! answering: `Replay::scripted`) on tokio's paused clock, and what the run measured.

use std::time::Duration;

use crate::args::ScenarioKind;
use outbound_guard::State;
use outbound_guard_replay::{BreakerTransition, Fate, Replay};
use outbound_guard_replay::{Call, Recorded};
use outbound_guard_settings::SystemSettings;

/// How the upstream behaves, and for how long the callers come.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    pub kind: ScenarioKind,
    /// Successful calls before the fault.
    pub warm: u32,
    pub every: Duration,
    pub duration: Duration,
    pub latency: Duration,
    /// `errors`: the share of answers that are errors.
    pub rate: f64,
    /// `slow`: how long an answer takes.
    pub slow: Duration,
    /// `recovery`: how long the hang lasts.
    pub fault_for: Duration,
    /// `429`: the `Retry-After` of every answer.
    pub retry_after: Duration,
}

impl Script {
    /// How long after the fault starts callers keep coming.
    fn run_for(&self) -> Duration {
        match self.kind {
            ScenarioKind::Recovery => self.fault_for + self.duration,
            _ => self.duration,
        }
    }
}

/// One caller's call: when it started and finished (relative to the fault's start),
/// and whether it was refused.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Since the fault started (zero for a warm caller).
    started: Duration,
    took: Duration,
    /// When the caller was told, in seconds since the fault started (negative while warm).
    told: f64,
    /// Before the fault started (a warm caller).
    warm: bool,
    /// Refused by the breaker or the bulkhead.
    refused: bool,
}

/// What a run measured. Times are since the fault started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// The first caller refused (by the breaker or the bulkhead), when it was told.
    pub first_refusal: Option<Duration>,
    /// The breaker's first transition to open.
    pub breaker_opened: Option<Duration>,
    /// The first caller refused without waiting at all.
    pub first_zero_wait_refusal: Option<Duration>,
    /// Upstream calls made from the fault's start to the first zero-wait refusal (all of
    /// them when there was none).
    pub upstream_calls_until_fast_fail: usize,
    /// Upstream calls made from the fault's start to the end of the run.
    pub upstream_calls: usize,
    /// Most callers inside `guard.call` at once (running or waiting for a permit).
    pub most_callers_alive: usize,
    /// Most upstream calls running at once.
    pub most_in_flight: usize,
    /// Callers refused (open, half-open full, bulkhead full) after the fault started.
    pub refused: usize,
    /// Callers after the fault started.
    pub callers: usize,
    /// `recovery`: from the fault's end to the breaker closed again.
    pub recovered_after: Option<Duration>,
    /// How many times the breaker opened (each open → half-open → open is one more).
    pub open_cycles: usize,
    /// Upstream calls started after the breaker first opened: its trial calls, while the
    /// fault lasts.
    pub trial_calls: usize,
    /// The open periods, in order (each opening's length).
    pub open_periods: Vec<Duration>,
}

/// The timeline of a run, for the pictures: one sample per caller arrival, the
/// transitions, and each refusal and upstream call.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Seconds since the fault's start (negative while warm), callers alive, upstream
    /// calls in flight.
    pub samples: Vec<(f64, usize, usize)>,
    /// Seconds since the fault's start, and the state entered.
    pub transitions: Vec<(f64, State)>,
    /// When each refusal was told, in seconds since the fault's start.
    pub refusals: Vec<f64>,
    /// When each upstream call started, in seconds since the fault's start.
    pub upstream: Vec<f64>,
    /// The run's span, in seconds since the fault's start.
    pub start: f64,
    pub end: f64,
    /// `recovery`: when the fault ended.
    pub fault_end: Option<f64>,
}

/// One run's result.
#[derive(Debug, Clone)]
pub struct Run {
    pub figures: Figures,
    pub timeline: Timeline,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The fault's window, in µs since the run's start: from its start to its end (`None`:
/// it lasts to the run's end).
#[derive(Clone, Copy)]
struct Fault {
    at: u64,
    end: Option<u64>,
}

/// The script's callers as calls to replay, one every `every` until the run's end:
/// each answered as the scripted upstream answers a call that starts then. In the
/// `errors` scenario the upstream fails a share of the calls that reach it, spread
/// evenly in the order they reach it, whenever that is: those calls have no answer of
/// their own, and the n-th the guard lets run is answered by the n-th of `path`.
fn calls(script: &Script, fault: Fault) -> (Vec<Call>, Vec<bool>) {
    let (every, latency) = (micros(script.every).max(1), u32_micros(script.latency));
    let end = fault.at + micros(script.run_for());
    let (mut calls, mut unknown) = (Vec::new(), 0_usize);
    let mut start = 0;
    while start < end {
        let faulty = start >= fault.at && fault.end.is_none_or(|e| start < e);
        let (outcome, duration) = match script.kind {
            _ if !faulty => (Recorded::Success, latency),
            ScenarioKind::Hang | ScenarioKind::Recovery => (Recorded::Timeout, 0),
            ScenarioKind::Slow => (Recorded::Success, u32_micros(script.slow)),
            ScenarioKind::RateLimited => (Recorded::Failure, latency),
            // Its answers depend on the calls in flight: it runs in `queue`, not here.
            ScenarioKind::Queue => (Recorded::Success, latency),
            ScenarioKind::Errors => {
                unknown += 1;
                (Recorded::Rejected, latency)
            }
        };
        calls.push(Call {
            start,
            duration,
            outcome,
        });
        start += every;
    }
    // Call i fails when the running share of failures crosses a whole number.
    #[allow(clippy::cast_precision_loss)]
    let path = (0..unknown)
        .map(|i| ((i + 1) as f64 * script.rate).floor() > (i as f64 * script.rate).floor())
        .collect();
    (calls, path)
}

fn u32_micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// Runs one scenario against a fresh guard of `settings`: its callers replayed by the
/// replay's engine, on its own paused runtime.
pub fn run(settings: &SystemSettings, script: &Script) -> Run {
    let every = micros(script.every);
    let at = every.saturating_mul(u64::from(script.warm));
    let fault = Fault {
        at,
        end: (script.kind == ScenarioKind::Recovery).then(|| at + micros(script.fault_for)),
    };
    let (calls, path) = calls(script, fault);
    let retry_after = (script.kind == ScenarioKind::RateLimited).then_some(script.retry_after);
    let replay = Replay::scripted(settings, &calls, path, retry_after);
    measure(&calls, &replay, fault)
}

/// The most of `intervals` (start, end; µs) open at once: at one instant, the ends
/// first, then each start (an interval that ends where it starts counts while it is
/// there: the caller was inside the guard for that moment).
fn most_at_once(intervals: impl Iterator<Item = (u64, u64)>) -> usize {
    // At one instant: ends (0), then starts (1), then the moments (2).
    let mut edges: Vec<(u64, u8)> = intervals
        .flat_map(|(start, end)| {
            if end > start {
                vec![(start, 1), (end, 0)]
            } else {
                vec![(start, 2)]
            }
        })
        .collect();
    edges.sort_unstable();
    let (mut now, mut most) = (0_usize, 0_usize);
    for (_, kind) in edges {
        match kind {
            0 => now = now.saturating_sub(1),
            1 => {
                now += 1;
                most = most.max(now);
            }
            _ => most = most.max(now + 1),
        }
    }
    most
}

/// How many of `intervals` are open just before `t`: started before it, not ended by it.
fn open_at(intervals: &[(u64, u64)], t: u64) -> usize {
    intervals.iter().filter(|(s, e)| *s < t && *e > t).count()
}

/// What a run measured, and its timeline, from each call's fate and times and the
/// breaker's transitions.
fn measure(calls: &[Call], replay: &Replay, fault: Fault) -> Run {
    let since = |at: u64| {
        if at >= fault.at {
            (at - fault.at) as f64 / 1e6
        } else {
            -((fault.at - at) as f64 / 1e6)
        }
    };
    let d = Duration::from_micros;
    let seen: Vec<Seen> = calls
        .iter()
        .zip(&replay.fates)
        .zip(&replay.times)
        .map(|((call, fate), (ended, _))| Seen {
            started: d(call.start.saturating_sub(fault.at)),
            took: d(ended.saturating_sub(call.start)),
            told: since(*ended),
            warm: call.start < fault.at,
            refused: matches!(fate, Fate::Refused | Fate::BulkheadFull),
        })
        .collect();
    let alive: Vec<(u64, u64)> = calls
        .iter()
        .zip(&replay.times)
        .map(|(c, (ended, _))| (c.start, *ended))
        .collect();
    let in_flight: Vec<(u64, u64)> = replay
        .times
        .iter()
        .filter(|(_, ran)| *ran != u64::MAX)
        .map(|(ended, ran)| (*ran, *ended))
        .collect();
    let starts: Vec<u64> = in_flight.iter().map(|(ran, _)| *ran).collect();
    let last = replay
        .times
        .iter()
        .map(|(ended, _)| *ended)
        .max()
        .unwrap_or(0);
    let mut samples: Vec<(f64, usize, usize)> = calls
        .iter()
        .map(|c| {
            (
                since(c.start),
                open_at(&alive, c.start),
                open_at(&in_flight, c.start),
            )
        })
        .collect();
    // The last calls may end after the last arrival: sample the quiet end too.
    samples.push((since(last), 0, 0));
    let most = (
        most_at_once(alive.iter().copied()),
        most_at_once(in_flight.iter().copied()),
    );
    let figures = figures(&seen, &replay.transitions, &starts, fault, most);
    let timeline = Timeline {
        samples,
        transitions: replay
            .transitions
            .iter()
            .map(|m| (since(m.at), m.to))
            .collect(),
        refusals: seen.iter().filter(|s| s.refused).map(|s| s.told).collect(),
        upstream: starts.iter().map(|at| since(*at)).collect(),
        start: since(0),
        end: since(last),
        fault_end: fault.end.map(since),
    };
    Run { figures, timeline }
}

/// What a run measured, from what its callers saw, the breaker's transitions, the
/// upstream calls' starts (µs), and the most callers and upstream calls alive at once.
fn figures(
    seen: &[Seen],
    transitions: &[BreakerTransition],
    starts: &[u64],
    fault: Fault,
    (most_callers_alive, most_in_flight): (usize, usize),
) -> Figures {
    let d = Duration::from_micros;
    let faulty: Vec<&Seen> = seen.iter().filter(|s| !s.warm).collect();
    let first_zero_wait = faulty
        .iter()
        .filter(|s| s.refused && s.took.is_zero())
        .map(|s| s.started)
        .min();
    let after = |at: u64| at.checked_sub(fault.at).map(d);
    let opens = || transitions.iter().filter(|m| m.to == State::Open);
    Figures {
        first_refusal: faulty
            .iter()
            .filter(|s| s.refused)
            .map(|s| s.started + s.took)
            .min(),
        breaker_opened: opens()
            .filter(|m| m.at >= fault.at)
            .find_map(|m| after(m.at)),
        first_zero_wait_refusal: first_zero_wait,
        upstream_calls_until_fast_fail: starts
            .iter()
            .filter_map(|at| after(*at))
            .filter(|s| first_zero_wait.is_none_or(|first| *s <= first))
            .count(),
        upstream_calls: starts.iter().filter(|at| **at >= fault.at).count(),
        most_callers_alive,
        most_in_flight,
        refused: faulty.iter().filter(|s| s.refused).count(),
        callers: faulty.len(),
        recovered_after: fault.end.and_then(|fault_end| {
            transitions
                .iter()
                .find(|m| m.to == State::Closed && m.at >= fault_end)
                .map(|m| d(m.at - fault_end))
        }),
        open_cycles: opens().count(),
        trial_calls: opens().next().map_or(0, |opened| {
            starts.iter().filter(|at| **at > opened.at).count()
        }),
        open_periods: opens().filter_map(|m| m.open).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ends before starts at one instant; a call that ends where it starts is counted
    /// while it is there, and never after.
    #[test]
    fn the_most_at_once_counts_each_interval_while_it_is_open() {
        assert_eq!(most_at_once([(0, 10), (10, 20)].into_iter()), 1);
        assert_eq!(most_at_once([(0, 10), (5, 20)].into_iter()), 2);
        // Eight zero-length calls one after another are one at a time.
        assert_eq!(most_at_once((0..8).map(|t| (t, t))), 1);
        assert_eq!(most_at_once([(0, 10), (5, 5), (6, 6)].into_iter()), 2);
        assert_eq!(most_at_once(std::iter::empty()), 0);
    }
}
