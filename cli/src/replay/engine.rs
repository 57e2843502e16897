//! The replay: one system's recorded calls through a fresh real [`Guard`] of the
//! settings asked for, each at its recorded start on tokio's paused clock (nothing
//! sleeps for real), and what each call's fate was.
//!
//! Each call is `guard.call(upstream)`, the code path a service runs, where the
//! upstream is a future that answers as the recording says:
//!
//! - `success`, `slow`: `Ok` after the recorded duration (the replayed guard judges
//!   slowness by its own `cb_slow_threshold`);
//! - `failure`: `Err` after the recorded duration;
//! - `timeout`: no answer at all, so it is cut at the replayed `total_timeout` (the
//!   recording only knows it took at least its own);
//! - `cancelled`: no answer, and the caller gives up after the recorded duration;
//! - `rejected` (the recording's breaker or bulkhead refused it, so nobody knows how the
//!   upstream would have answered): answered like the last call of the system the
//!   recording let through before it, and counted apart as a guess.
//!
//! What an operator or the settings file's `cb_mode` did to the recording's breaker
//! (force open, disable, back to closed) is done to the replayed one at the same time:
//! no outcome would have caused it.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{Cause, Guard, ManualAction, Observer, State, Transition};
use outbound_guard_settings::SystemSettings;
use tokio::time::{sleep, sleep_until, Instant};

use super::recording::{Call, Recorded, RecordedTransition};

/// What the replayed guard did with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Fate {
    /// Still running (never seen once the replay is over).
    Pending = 0,
    /// Reached the upstream.
    Ran = 1,
    /// The breaker refused it: open, half-open full or forced open.
    Refused = 2,
    /// The bulkhead refused it.
    BulkheadFull = 3,
}

impl Fate {
    fn from_u8(value: u8) -> Fate {
        match value {
            1 => Fate::Ran,
            2 => Fate::Refused,
            3 => Fate::BulkheadFull,
            _ => Fate::Pending,
        }
    }
}

/// A transition of the replayed breaker.
#[derive(Debug, Clone)]
pub(crate) struct Replayed {
    /// Microseconds since the recording's start.
    pub(crate) at: u64,
    pub(crate) from: State,
    pub(crate) to: State,
    /// The log line: `sber opened: 16 of 50 calls failed (32% ≥ 30%)`.
    pub(crate) why: String,
}

/// One system's replay under one setting.
#[derive(Debug)]
pub(crate) struct Replay {
    /// Each call's fate, in the recording's (start) order.
    pub(crate) fates: Vec<Fate>,
    pub(crate) transitions: Vec<Replayed>,
}

#[derive(Default)]
struct Transitions {
    origin: Mutex<Option<Instant>>,
    seen: Mutex<Vec<Replayed>>,
}

impl Observer for Transitions {
    fn on_transition(&self, t: &Transition<'_>) {
        let origin = self.origin.lock().ok().and_then(|o| *o);
        let at = origin.map_or(0, |o| {
            u64::try_from(t.at.saturating_duration_since(o).as_micros()).unwrap_or(u64::MAX)
        });
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(Replayed {
                at,
                from: t.from,
                to: t.to,
                why: t.to_string(),
            });
        }
    }

    fn wants_calls(&self) -> bool {
        false
    }
}

/// How the upstream answers one replayed call.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Ok(Duration),
    Err(Duration),
    Hang,
    /// The caller gives up after this long.
    Abandon(Duration),
}

fn answer(outcome: Recorded, duration: u32) -> Answer {
    let duration = Duration::from_micros(u64::from(duration));
    match outcome {
        Recorded::Success | Recorded::Slow | Recorded::Rejected => Answer::Ok(duration),
        Recorded::Failure => Answer::Err(duration),
        Recorded::Timeout => Answer::Hang,
        Recorded::Cancelled => Answer::Abandon(duration),
    }
}

/// The operator's and the settings file's actions among the recording's transitions,
/// with their times (µs), in order.
pub(crate) fn actions(transitions: &[RecordedTransition]) -> Vec<(u64, ManualAction)> {
    transitions
        .iter()
        .filter(|t| t.reason == "manual" || t.reason == "settings")
        .filter_map(|t| {
            let action = match t.to.as_str() {
                "forced_open" => ManualAction::ForceOpen,
                "disabled" => ManualAction::Disable,
                "closed" => ManualAction::Reset,
                _ => return None,
            };
            Some((t.at, action))
        })
        .collect()
}

/// Replays `calls` (in start order) through a fresh guard of `settings`, on a runtime of
/// its own with a paused clock, doing `actions` to its breaker at their times.
pub(crate) fn replay(
    settings: &SystemSettings,
    calls: &[Call],
    actions: &[(u64, ManualAction)],
) -> Replay {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with a paused clock builds");
    runtime.block_on(drive(settings, calls, actions))
}

async fn drive(
    settings: &SystemSettings,
    calls: &[Call],
    actions: &[(u64, ManualAction)],
) -> Replay {
    let transitions = Arc::new(Transitions::default());
    let guard = Guard::with_observers(settings, vec![transitions.clone()]);
    let origin = Instant::now();
    if let Ok(mut o) = transitions.origin.lock() {
        *o = Some(origin);
    }
    let fates: Arc<[AtomicU8]> = (0..calls.len()).map(|_| AtomicU8::new(0)).collect();
    let running = Arc::new(AtomicUsize::new(0));
    // A refused call of the recording is answered like the last one that ran.
    let mut last_ran = (Recorded::Success, 0);
    let mut actions = actions.iter().peekable();
    for (index, call) in calls.iter().enumerate() {
        while let Some((at, action)) = actions.next_if(|(at, _)| *at <= call.start) {
            act(&guard, origin + Duration::from_micros(*at), *action).await;
        }
        let at = origin + Duration::from_micros(call.start);
        if at > Instant::now() {
            sleep_until(at).await;
        }
        let answer = if call.outcome == Recorded::Rejected {
            answer(last_ran.0, last_ran.1)
        } else {
            last_ran = (call.outcome, call.duration);
            answer(call.outcome, call.duration)
        };
        let (guard, fates, running) = (guard.clone(), fates.clone(), running.clone());
        running.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let fate = one(&guard, answer).await;
            fates[index].store(fate as u8, Ordering::Relaxed);
            running.fetch_sub(1, Ordering::Relaxed);
        });
    }
    for (at, action) in actions {
        act(&guard, origin + Duration::from_micros(*at), *action).await;
    }
    // Every call ends by its duration, the total timeout or the bulkhead's wait.
    let step = guard.total_timeout().max(Duration::from_secs(1));
    while running.load(Ordering::Relaxed) > 0 {
        sleep(step).await;
    }
    let fates = fates
        .iter()
        .map(|f| Fate::from_u8(f.load(Ordering::Relaxed)))
        .collect();
    let transitions = transitions
        .seen
        .lock()
        .map(|t| t.clone())
        .unwrap_or_default();
    Replay { fates, transitions }
}

/// Does `action` to the guard's breaker at `at`.
async fn act(guard: &Guard, at: Instant, action: ManualAction) {
    if at > Instant::now() {
        sleep_until(at).await;
    }
    guard.breaker().act(action);
}

/// One call through the guard, and its fate.
async fn one(guard: &Guard, answer: Answer) -> Fate {
    let result = match answer {
        Answer::Ok(d) => {
            guard
                .call(async move {
                    if !d.is_zero() {
                        sleep(d).await;
                    }
                    Ok::<(), ()>(())
                })
                .await
        }
        Answer::Err(d) => {
            guard
                .call(async move {
                    if !d.is_zero() {
                        sleep(d).await;
                    }
                    Err::<(), ()>(())
                })
                .await
        }
        Answer::Hang => guard.call(std::future::pending::<Result<(), ()>>()).await,
        Answer::Abandon(d) => {
            match tokio::time::timeout(d, guard.call(std::future::pending::<Result<(), ()>>()))
                .await
            {
                Ok(result) => result,
                // The caller gave up: it ran, unless it was still waiting for a permit.
                Err(_) => return Fate::Ran,
            }
        }
    };
    match result {
        Ok(_) => Fate::Ran,
        Err(e) => match e.cause() {
            Cause::Timeout { .. } | Cause::Slow { .. } => Fate::Ran,
            Cause::BulkheadFull { .. } => Fate::BulkheadFull,
            _ => Fate::Refused,
        },
    }
}
