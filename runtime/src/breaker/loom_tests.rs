//! Loom explores the interleavings (up to two preemptions; one for the generation wrap,
//! whose operator thread makes 256 transitions) of two or three threads on the real core
//! and its delivery of transitions: never more than N trials, trial slots returned on
//! cancel and never into a later cycle, no lost or doubled transition, stale outcomes
//! ignored even 256 generations later, transitions delivered in order and none left
//! behind, an observer's own transition delivered next. Loom switches threads at lock
//! acquisitions and atomic operations; what it proves is bounded by that and by the
//! preemption bound.

use loom::sync::Arc;
use loom::thread;

use crate::action::ManualAction;
use crate::breaker::delivery::Delivery;
use crate::breaker::machine::{Change, Config, Denied, Machine, Ticket};
use crate::state::State;
use crate::verdict::Verdict;

/// Open duration, in the core's nanoseconds.
const OPEN: u64 = 10;

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(model);
}

fn core(window: u32, min_calls: u32, failure_rate: f64, trials: u32) -> Arc<Machine> {
    Arc::new(Machine::new(Config {
        window,
        min_calls,
        failure_rate,
        open_nanos: OPEN,
        open_max_nanos: OPEN,
        backoff: 1.0,
        jitter: 0.0,
        trials,
    }))
}

/// A core opened at t = 0 (one failure opens it), so half-open from t = OPEN.
fn opened(trials: u32) -> Arc<Machine> {
    let core = core(1, 1, 1.0, trials);
    let ticket = admit(&core, 0).unwrap();
    let change = core.count(ticket, Verdict::FAILURE, || 0).unwrap();
    assert_eq!((change.from, change.to), (State::Closed, State::Open));
    core
}

fn admit(core: &Machine, now: u64) -> Result<Ticket, Denied> {
    core.admit(|| now).0
}

/// Half-open at t = OPEN with `held` trials admitted.
fn half_open(trials: u32, held: usize) -> (Arc<Machine>, Vec<Ticket>) {
    let core = opened(trials);
    let tickets: Vec<_> = (0..held).map(|_| admit(&core, OPEN).unwrap()).collect();
    assert_eq!(core.state(), State::HalfOpen);
    (core, tickets)
}

#[test]
fn concurrent_admissions_never_exceed_the_trials() {
    check(|| {
        let core = opened(2);
        let spawn = |core: &Arc<Machine>| {
            let core = core.clone();
            thread::spawn(move || core.admit(|| OPEN))
        };
        let a = spawn(&core);
        let b = spawn(&core);
        let c = core.admit(|| OPEN);
        let results = [a.join().unwrap(), b.join().unwrap(), c];
        let admitted = results.iter().filter(|(r, _)| r.is_ok()).count();
        let changes: Vec<Change> = results.iter().filter_map(|(_, c)| *c).collect();
        assert_eq!(admitted, 2, "exactly the trials are admitted");
        assert_eq!(changes.len(), 1, "one transition to half-open: {changes:?}");
        assert_eq!(
            (changes[0].from, changes[0].to),
            (State::Open, State::HalfOpen)
        );
        for (r, _) in &results {
            if let Err(denied) = r {
                assert_eq!(*denied, Denied::TrialsTaken { trials: 2 });
            }
        }
        let reading = core.reading();
        assert_eq!(
            (reading.state, reading.trials_admitted),
            (State::HalfOpen, 2)
        );
    });
}

#[test]
fn a_cancelled_trial_returns_its_slot() {
    check(|| {
        let (core, tickets) = half_open(1, 1);
        let held = tickets[0];
        let canceller = {
            let core = core.clone();
            thread::spawn(move || core.cancel(held))
        };
        let raced = admit(&core, OPEN);
        canceller.join().unwrap();
        let reading = core.reading();
        match raced {
            Ok(_) => assert_eq!(reading.trials_admitted, 1),
            Err(denied) => {
                assert_eq!(denied, Denied::TrialsTaken { trials: 1 });
                assert_eq!(reading.trials_admitted, 0);
                // The slot is back: the next caller is a trial.
                assert!(admit(&core, OPEN).is_ok());
            }
        }
        assert_eq!(core.state(), State::HalfOpen);
    });
}

#[test]
fn concurrent_cancels_return_every_slot() {
    check(|| {
        let (core, tickets) = half_open(2, 2);
        let threads: Vec<_> = tickets
            .into_iter()
            .map(|t| {
                let core = core.clone();
                thread::spawn(move || core.cancel(t))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(core.reading().trials_admitted, 0);
        assert!(admit(&core, OPEN).is_ok());
        assert!(admit(&core, OPEN).is_ok());
        assert!(admit(&core, OPEN).is_err());
    });
}

#[test]
fn concurrent_failures_open_it_exactly_once() {
    // A window of 3 is packed in one atomic word; one of 51 is a ring under the lock.
    for window in [3, 51] {
        concurrent_failures_open_it_exactly_once_with(window);
    }
}

fn concurrent_failures_open_it_exactly_once_with(window: u32) {
    check(move || {
        // Three outcomes needed; two failures of three is 67% ≥ 60%.
        let core = core(window, 3, 0.6, 1);
        let call = |core: &Arc<Machine>, failed: bool| {
            let core = core.clone();
            thread::spawn(move || {
                let ticket = admit(&core, 0).expect("closed admits every call");
                core.count(ticket, Verdict::new(failed), || 0)
            })
        };
        let a = call(&core, true);
        let b = call(&core, true);
        let ticket = admit(&core, 0).unwrap();
        let c = core.count(ticket, Verdict::SUCCESS, || 0);
        // A reading taken while others record is consistent.
        let reading = core.reading();
        assert!(reading.failures <= reading.calls);
        assert_eq!(
            reading.open_until_nanos.is_some(),
            reading.state == State::Open
        );
        let changes: Vec<Change> = [a.join().unwrap(), b.join().unwrap(), c]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(
            (changes[0].from, changes[0].to),
            (State::Closed, State::Open)
        );
        assert_eq!(core.state(), State::Open);
        let reading = core.reading();
        assert_eq!(core.window_counts(), (0, 0));
        // While open, readings show the figures that tripped it.
        assert_eq!(reading.opened_by, Some(changes[0].reason));
        assert_eq!(
            (
                Some((reading.failures, reading.calls)),
                reading.open_until_nanos
            ),
            (changes[0].reason.figures(), Some(OPEN))
        );
    });
}

#[test]
fn racing_trial_outcomes_make_one_transition() {
    for second_fails in [false, true] {
        check(move || {
            let (core, tickets) = half_open(2, 2);
            let (a, b) = (tickets[0], tickets[1]);
            let other = {
                let core = core.clone();
                thread::spawn(move || core.count(b, Verdict::new(second_fails), || OPEN + 1))
            };
            let mine = core.count(a, Verdict::SUCCESS, || OPEN + 1);
            let changes: Vec<Change> = [mine, other.join().unwrap()]
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(changes.len(), 1, "{changes:?}");
            let expected = if second_fails {
                State::Open
            } else {
                State::Closed
            };
            assert_eq!(changes[0].to, expected);
            assert_eq!(core.state(), expected);
            let reading = core.reading();
            assert_eq!(core.window_counts(), (0, 0));
            let shown = changes[0].reason.figures().map_or(0, |(_, calls)| calls);
            assert_eq!((reading.calls, reading.trials_admitted), (shown, 0));
        });
    }
}

#[test]
fn no_trial_slot_leaks_into_a_later_cycle() {
    check(|| {
        let (core, tickets) = half_open(2, 2);
        let (old, failing) = (tickets[0], tickets[1]);
        let canceller = {
            let core = core.clone();
            thread::spawn(move || core.cancel(old))
        };
        // The cycle fails, and a new one starts a full open duration later.
        let change = core.count(failing, Verdict::FAILURE, || OPEN).unwrap();
        assert_eq!(change.to, State::Open);
        let fresh = admit(&core, 2 * OPEN);
        assert!(fresh.is_ok(), "{fresh:?}");
        canceller.join().unwrap();
        let reading = core.reading();
        assert_eq!(reading.state, State::HalfOpen);
        assert_eq!(
            reading.trials_admitted, 1,
            "only the new cycle's trial is out"
        );
        // So the new cycle still has exactly one more slot.
        assert!(admit(&core, 2 * OPEN).is_ok());
        assert!(admit(&core, 2 * OPEN).is_err());
    });
}

#[test]
fn stale_outcomes_do_not_move_the_state() {
    check(|| {
        let core = core(1, 1, 1.0, 1);
        // Admitted while closed, finishes late.
        let closed_ticket = admit(&core, 0).unwrap();
        let opener = admit(&core, 0).unwrap();
        core.count(opener, Verdict::FAILURE, || 0).unwrap();
        // A trial of a first half-open cycle that failed.
        let old_trial = admit(&core, OPEN).unwrap();
        // Its slot is handed back (it stays unrecorded) and the next trial fails the cycle.
        core.cancel(old_trial);
        let failing = admit(&core, OPEN).unwrap();
        core.count(failing, Verdict::FAILURE, || OPEN).unwrap();
        // Second cycle, one trial out.
        let trial = admit(&core, 2 * OPEN).unwrap();
        let late_success = {
            let core = core.clone();
            thread::spawn(move || core.count(closed_ticket, Verdict::SUCCESS, || 2 * OPEN))
        };
        let late_trial = {
            let core = core.clone();
            thread::spawn(move || core.count(old_trial, Verdict::SUCCESS, || 2 * OPEN))
        };
        let raced = admit(&core, 2 * OPEN);
        assert_eq!(late_success.join().unwrap(), None);
        assert_eq!(late_trial.join().unwrap(), None);
        assert_eq!(raced.unwrap_err(), Denied::TrialsTaken { trials: 1 });
        let reading = core.reading();
        assert_eq!(
            (
                reading.state,
                reading.trials_admitted,
                reading.trials_succeeded
            ),
            (State::HalfOpen, 1, 0)
        );
        assert_eq!(
            core.count(trial, Verdict::SUCCESS, || 2 * OPEN).unwrap().to,
            State::Closed
        );
    });
}

#[test]
fn retry_after_is_measured_from_the_callers_now() {
    check(|| {
        let (core, tickets) = half_open(1, 1);
        let trial = tickets[0];
        // The trial fails at t = 2·OPEN: open until 3·OPEN.
        let failer = {
            let core = core.clone();
            thread::spawn(move || core.count(trial, Verdict::FAILURE, || 2 * OPEN))
        };
        // A caller at t = 2·OPEN + 5 sees half-open or open, whichever comes first.
        let now = 2 * OPEN + 5;
        let (result, change) = core.admit(|| now);
        failer.join().unwrap().unwrap();
        assert_eq!(change, None);
        match result.unwrap_err() {
            Denied::TrialsTaken { trials } => assert_eq!(trials, 1),
            Denied::Open { remaining_nanos } => assert_eq!(remaining_nanos, 3 * OPEN - now),
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn manual_actions_race_with_outcomes() {
    check(|| {
        let (core, tickets) = half_open(1, 1);
        let trial = tickets[0];
        let recorder = {
            let core = core.clone();
            thread::spawn(move || core.count(trial, Verdict::SUCCESS, || OPEN))
        };
        let forced = core.manual(ManualAction::ForceOpen, OPEN);
        recorder.join().unwrap();
        assert!(forced.is_some());
        // Whatever the order, an operator's force-open is the last word.
        assert_eq!(core.state(), State::ForcedOpen);
        assert_eq!(admit(&core, 100 * OPEN).unwrap_err(), Denied::ForcedOpen);
    });
}

#[test]
fn closed_outcomes_racing_an_opening_land_in_no_later_window() {
    // Packed (2) and ring (52) windows: an outcome admitted while closed that is
    // recorded after the breaker opened must not appear in any later window.
    for window in [2, 52] {
        check(move || {
            let core = core(window, 2, 0.5, 1);
            let tickets: Vec<Ticket> = (0..3).map(|_| admit(&core, 0).unwrap()).collect();
            let failures = {
                let core = core.clone();
                let (a, b) = (tickets[0], tickets[1]);
                thread::spawn(move || {
                    let first = core.count(a, Verdict::FAILURE, || 0);
                    let second = core.count(b, Verdict::FAILURE, || 0);
                    [first, second]
                })
            };
            let success = core.count(tickets[2], Verdict::SUCCESS, || 0);
            let changes: Vec<Change> = failures
                .join()
                .unwrap()
                .into_iter()
                .chain([success])
                .flatten()
                .collect();
            assert_eq!(changes.len(), 1, "{changes:?}");
            assert_eq!(changes[0].to, State::Open);
            let reading = core.reading();
            assert_eq!(reading.state, State::Open);
            // No late outcome landed in the open state's window; readings show the
            // figures of the opening, untouched by them.
            assert_eq!(core.window_counts(), (0, 0));
            assert_eq!(
                Some((reading.failures, reading.calls)),
                changes[0].reason.figures()
            );
            // A reset starts a fresh closed window: still empty.
            core.manual(ManualAction::Reset, 0).unwrap();
            assert_eq!(core.reading().calls, 0);
        });
    }
}

#[test]
fn a_stale_outcome_never_lands_in_a_window_256_generations_later() {
    // A recorder preempted between its look at the state and its write, while an
    // operator forces it open and resets it 128 times: the outcome belongs to generation 0 and
    // must not land in the window of generation 256 (whose low byte is 0 again).
    let mut builder = loom::model::Builder::new();
    // One preemption is all it takes: the recorder stops, the operator runs to the end.
    builder.preemption_bound = Some(1);
    builder.max_branches = 100_000;
    builder.check(|| {
        // Two outcomes needed to open: the one failure alone never does.
        let core = core(2, 2, 0.5, 1);
        let stale = admit(&core, 0).unwrap();
        let operator = {
            let core = core.clone();
            thread::spawn(move || {
                // 256 transitions: a reset of a closed breaker is none.
                for _ in 0..128 {
                    core.manual(ManualAction::ForceOpen, 0).unwrap();
                    core.manual(ManualAction::Reset, 0).unwrap();
                }
            })
        };
        assert_eq!(core.count(stale, Verdict::FAILURE, || 0), None);
        operator.join().unwrap();
        let reading = core.reading();
        assert_eq!(
            (reading.state, reading.calls, reading.failures),
            (State::Closed, 0, 0),
            "a generation-0 outcome landed in generation 256's window"
        );
    });
}

/// Transitions in the order observers were handed them.
type Delivered = Arc<loom::sync::Mutex<Vec<Change>>>;

/// Each transition starts where the one before ended, from closed.
fn assert_chain(delivered: &[Change]) -> State {
    let mut at = State::Closed;
    for change in delivered {
        assert_eq!(change.from, at, "{delivered:?}");
        at = change.to;
    }
    at
}

#[test]
fn transitions_reach_the_observers_in_order_and_none_is_left_behind() {
    check(|| {
        let core = core(1, 1, 1.0, 1);
        let delivery = Arc::new(Delivery::new());
        let delivered: Delivered = Arc::default();
        let act = |action: ManualAction| {
            let (core, delivery, delivered) = (core.clone(), delivery.clone(), delivered.clone());
            thread::spawn(move || {
                let change = core.manual(action, 0);
                if change.is_some() {
                    delivery.run(&core, |c| delivered.lock().unwrap().push(*c));
                }
                change.is_some()
            })
        };
        let a = act(ManualAction::ForceOpen);
        let b = act(ManualAction::Disable);
        // This thread fails a call: closed → open, if still closed then.
        let ticket = admit(&core, 0);
        let mine = ticket
            .ok()
            .and_then(|t| core.count(t, Verdict::FAILURE, || 0));
        if mine.is_some() {
            delivery.run(&core, |c| delivered.lock().unwrap().push(*c));
        }
        let made = [a.join().unwrap(), b.join().unwrap(), mine.is_some()]
            .into_iter()
            .filter(|&made| made)
            .count();
        let delivered = delivered.lock().unwrap();
        assert_eq!(delivered.len(), made, "every transition delivered, once");
        assert_eq!(assert_chain(&delivered), core.state());
        assert!(!core.has_changes());
    });
}

#[test]
fn an_observer_acting_on_the_breaker_gets_its_own_transition_next() {
    check(|| {
        let core = core(1, 1, 1.0, 1);
        let delivery = Arc::new(Delivery::new());
        let delivered: Delivered = Arc::default();
        // Delivering: an observer resets whatever was forced open.
        let deliver = |core: &Machine, delivery: &Delivery, delivered: &Delivered| {
            delivery.run(core, |c| {
                delivered.lock().unwrap().push(*c);
                if c.to == State::ForcedOpen {
                    core.manual(ManualAction::Reset, 0);
                    // The nested run finds the lock held: the loop delivers it next.
                    delivery.run(core, |_| panic!("delivered out of the loop"));
                }
            });
        };
        let other = {
            let (core, delivery, delivered) = (core.clone(), delivery.clone(), delivered.clone());
            thread::spawn(move || {
                if core.manual(ManualAction::ForceOpen, 0).is_some() {
                    deliver(&core, &delivery, &delivered);
                }
            })
        };
        if core.manual(ManualAction::ForceOpen, 0).is_some() {
            deliver(&core, &delivery, &delivered);
        }
        other.join().unwrap();
        let delivered = delivered.lock().unwrap();
        assert_eq!(assert_chain(&delivered), State::Closed);
        assert_eq!(core.state(), State::Closed);
        assert!(!core.has_changes());
    });
}

#[test]
fn a_success_skipped_without_the_lock_hides_no_failure() {
    check(|| {
        // Two outcomes, both successes: a full window without failures.
        let core = core(2, 2, 0.5, 1);
        for _ in 0..2 {
            let ticket = admit(&core, 0).unwrap();
            core.count(ticket, Verdict::SUCCESS, || 0);
        }
        let (success, failure) = (admit(&core, 0).unwrap(), admit(&core, 0).unwrap());
        let other = {
            let core = core.clone();
            thread::spawn(move || core.count(success, Verdict::SUCCESS, || 0))
        };
        let change = core.count(failure, Verdict::FAILURE, || 0);
        assert_eq!(other.join().unwrap(), None);
        // One failure in two is 50%: whichever order, the failure is in the window, and
        // it opened the breaker exactly when the success came first.
        match change {
            Some(change) => {
                assert_eq!(change.to, State::Open);
                assert_eq!(
                    change.reason,
                    crate::state::Reason::FailureRate {
                        failures: 1,
                        calls: 2,
                        threshold: 0.5
                    }
                );
            }
            None => {
                let reading = core.reading();
                assert_eq!(
                    (reading.state, reading.failures, reading.calls),
                    (State::Closed, 1, 2)
                );
                assert_eq!(core.failure_rate(), 0.5);
            }
        }
    });
}

/// A reload racing the lock-free check of a full window of successes (the only place
/// the window's size is read without the lock): shrinking the window while a success
/// and a failure are recorded leaves counts that the ring holds exactly, within the new
/// size, and the failure is never lost unless a newer outcome pushed it out.
#[test]
fn a_reload_shrinking_the_window_races_recording_without_a_torn_count() {
    check(|| {
        let core = core(3, 3, 1.0, 1);
        for _ in 0..3 {
            let ticket = admit(&core, 0).unwrap();
            assert!(core.count(ticket, Verdict::SUCCESS, || 0).is_none());
        }
        let success = admit(&core, 0).unwrap();
        let failure = admit(&core, 0).unwrap();
        let recorder = {
            let core = core.clone();
            thread::spawn(move || {
                core.count(success, Verdict::SUCCESS, || 0);
                core.count(failure, Verdict::FAILURE, || 0);
            })
        };
        core.reconfigure(Config {
            window: 2,
            min_calls: 2,
            failure_rate: 1.0,
            open_nanos: OPEN,
            open_max_nanos: OPEN,
            backoff: 1.0,
            jitter: 0.0,
            trials: 1,
        });
        recorder.join().unwrap();
        let (failures, calls) = core.window_counts();
        assert_eq!(core.state(), State::Closed);
        assert_eq!(calls, 2, "the new size, full");
        assert_eq!(failures, 1, "the failure is the newest outcome: kept");
    });
}

#[test]
fn a_reset_of_a_closed_window_and_an_outcome_in_flight_agree() {
    // A call admitted before the reset ends while an operator resets the closed breaker,
    // whose window holds one outcome already. Either the outcome lands first and the
    // reset forgets both, or the reset comes first (a new generation) and the outcome,
    // now stale, is dropped: the window is empty either way, and nothing is a transition.
    check(|| {
        let core = core(4, 4, 1.0, 1);
        let first = admit(&core, 0).unwrap();
        assert_eq!(core.count(first, Verdict::SUCCESS, || 0), None);
        let in_flight = admit(&core, 0).unwrap();
        let recorder = {
            let core = core.clone();
            thread::spawn(move || core.count(in_flight, Verdict::FAILURE, || 0))
        };
        let acted = core.act(
            ManualAction::Reset,
            crate::state::Reason::Manual(ManualAction::Reset),
            0,
        );
        assert_eq!(recorder.join().unwrap(), None);
        assert!(
            matches!(
                acted,
                crate::breaker::machine::Acted::Cleared { calls: 1 | 2, .. }
            ),
            "{acted:?}"
        );
        assert_eq!(core.window_counts(), (0, 0));
        assert_eq!(core.state(), State::Closed);
        assert!(core.next_change().is_none(), "no transition");
    });
}

#[test]
fn a_hinted_failure_and_a_plain_one_open_once_for_the_hint() {
    // Two failures open a two-call window; one carries a hint of 5 × OPEN. Whichever
    // lands second opens the breaker, for the hint either way: kept from the closed
    // window, or carried by the opening failure itself.
    check(|| {
        let core = Arc::new(Machine::new(Config {
            window: 2,
            min_calls: 2,
            failure_rate: 1.0,
            open_nanos: OPEN,
            open_max_nanos: 10 * OPEN,
            backoff: 1.0,
            jitter: 0.0,
            trials: 1,
        }));
        let a = admit(&core, 0).unwrap();
        let b = admit(&core, 0).unwrap();
        let hinted = {
            let core = core.clone();
            thread::spawn(move || core.count(a, failure_hinted(5 * OPEN), || 0))
        };
        let plain = core.count(b, Verdict::FAILURE, || 0);
        let hinted = hinted.join().unwrap();
        assert!(plain.is_some() != hinted.is_some(), "opened exactly once");
        let reading = core.reading();
        assert_eq!(reading.state, State::Open);
        assert_eq!(reading.open_until_nanos, Some(5 * OPEN));
        assert_eq!(reading.opening.and_then(|o| o.hint_nanos), Some(5 * OPEN));
    });
}

#[test]
fn a_reset_of_an_empty_closed_window_and_an_outcome_in_flight_agree() {
    // The window is empty and one call is in flight. Either its outcome lands first and
    // the reset forgets it, or the reset comes first (a new generation, silent) and the
    // outcome, now stale, is dropped: empty either way, and no transition.
    check(|| {
        let core = core(4, 1, 1.0, 1);
        let in_flight = admit(&core, 0).unwrap();
        let recorder = {
            let core = core.clone();
            thread::spawn(move || core.count(in_flight, Verdict::FAILURE, || 0))
        };
        let acted = core.act(
            ManualAction::Reset,
            crate::state::Reason::Manual(ManualAction::Reset),
            0,
        );
        let opened = recorder.join().unwrap();
        // Landing first, the failure opens the one-call window: then the reset is a
        // transition back to closed. Else it is stale and lands nowhere.
        match acted {
            crate::breaker::machine::Acted::Moved(change) => {
                assert_eq!((change.from, change.to), (State::Open, State::Closed));
                assert_eq!(opened.map(|c| c.to), Some(State::Open));
            }
            crate::breaker::machine::Acted::Nothing => assert_eq!(opened, None),
            other @ crate::breaker::machine::Acted::Cleared { .. } => panic!("{other:?}"),
        }
        assert_eq!(core.window_counts(), (0, 0));
        assert_eq!(core.state(), State::Closed);
    });
}

/// A failure carrying the upstream's retry hint of `nanos`.
fn failure_hinted(nanos: u64) -> Verdict {
    Verdict::FAILURE.retry_after(Some(std::time::Duration::from_nanos(nanos)))
}
