//! The core on its own, sequentially: what no interleaving is needed to show.

use super::machine::{Config, Machine};
use super::ManualAction;
use crate::state::State;
use crate::verdict::Verdict;

fn config(window: u32, min_calls: u32) -> Config {
    Config {
        window,
        min_calls,
        failure_rate: 0.5,
        open_nanos: 10,
        open_max_nanos: 10,
        backoff: 1.0,
        jitter: 0.0,
        trials: 1,
    }
}

#[test]
fn a_ticket_never_lands_in_a_window_256_generations_later() {
    // Across the 8-bit and the 32-bit wrap of the generation, and for a small and a
    // large window: a generation-g outcome recorded in generation g + 256 (or g + 2³²)
    // is dropped.
    for start in [0, 255, (1 << 32) - 3] {
        for (window, jump) in [(2, 256u64), (60, 256), (2, 1 << 32)] {
            if jump > 256 && start != 0 {
                continue;
            }
            let core = Machine::at_generation(config(window, 2), start);
            let stale = core.admit(|| 0).0.unwrap();
            let jumped = Machine::at_generation(config(window, 2), start + jump);
            // The same ticket, taken to a core that has gone through `jump` transitions.
            assert_eq!(jumped.count(stale, Verdict::FAILURE, || 0), None);
            assert_eq!(jumped.reading().calls, 0, "start {start}, window {window}");
            // And the real thing: 256 transitions in between (a reset of a closed
            // breaker is none, so force open and reset).
            for _ in 0..128 {
                core.manual(ManualAction::ForceOpen, 0).unwrap();
                core.manual(ManualAction::Reset, 0).unwrap();
            }
            assert_eq!(core.count(stale, Verdict::FAILURE, || 0), None);
            assert_eq!(core.reading().calls, 0);
            assert_eq!(core.state(), State::Closed);
            while core.next_change().is_some() {}
        }
    }
}

#[test]
fn a_success_into_a_full_window_of_successes_is_skipped_and_changes_nothing() {
    let core = Machine::new(config(3, 2));
    for _ in 0..3 {
        let ticket = core.admit(|| 0).0.unwrap();
        assert_eq!(core.count(ticket, Verdict::SUCCESS, || 0), None);
    }
    assert_eq!((core.reading().failures, core.reading().calls), (0, 3));
    let ticket = core.admit(|| 0).0.unwrap();
    assert_eq!(core.count(ticket, Verdict::SUCCESS, || 0), None);
    assert_eq!((core.reading().failures, core.reading().calls), (0, 3));
    // A failure still lands: 1 of 3 is below 50%; a second one opens it.
    let ticket = core.admit(|| 0).0.unwrap();
    assert_eq!(core.count(ticket, Verdict::FAILURE, || 0), None);
    assert_eq!(core.failure_rate(), 1.0 / 3.0);
    let ticket = core.admit(|| 0).0.unwrap();
    assert_eq!(
        core.count(ticket, Verdict::FAILURE, || 5).unwrap().to,
        State::Open
    );
    // Every transition is queued, in order.
    let queued = core.next_change().unwrap();
    assert_eq!(
        (queued.from, queued.to, queued.at_nanos),
        (State::Closed, State::Open, 5)
    );
    assert!(core.next_change().is_none());
    assert!(!core.has_changes());
}

/// One outcome opens it; one trial; open periods in nanoseconds.
fn periods(open_nanos: u64, open_max_nanos: u64, backoff: f64) -> Config {
    Config {
        window: 1,
        min_calls: 1,
        failure_rate: 0.5,
        open_nanos,
        open_max_nanos,
        backoff,
        jitter: 0.0,
        trials: 1,
    }
}

/// Fails one call admitted at `at`: the opening it makes, if any.
fn fail_at(core: &Machine, at: u64) -> Option<super::machine::Opening> {
    let ticket = core.admit(|| at).0.unwrap();
    core.count(ticket, Verdict::FAILURE, || at)
        .and_then(|change| change.opening)
}

#[test]
fn a_hint_lengthening_a_running_open_period_records_its_length_from_the_opening() {
    let core = Machine::new(periods(10, 1_000, 1.0));
    let late = core.admit(|| 0).0.unwrap(); // admitted before the opening
    assert_eq!(fail_at(&core, 100).unwrap().nanos, 10);
    // Its outcome lands 5 after the opening, asking for 50 more.
    assert_eq!(core.count(late, failure_hinted(50), || 105), None);
    let opening = core.reading().opening.unwrap();
    assert_eq!(opening.nanos, 55, "from the opening at 100 to 155");
    assert_eq!(opening.hint_nanos, Some(50));
    assert_eq!(core.reading().open_until_nanos, Some(155));
}

#[test]
fn a_hint_no_longer_than_the_breakers_own_period_is_not_what_decided_it() {
    let core = Machine::new(periods(10, 1_000, 1.0));
    let ticket = core.admit(|| 0).0.unwrap();
    let opening = core
        .count(ticket, failure_hinted(10), || 0)
        .and_then(|change| change.opening)
        .unwrap();
    assert_eq!((opening.nanos, opening.hint_nanos), (10, None));
}

#[test]
fn a_reopening_held_at_the_cap_is_not_called_backed_off() {
    // Backoff 2, but the cap is the period itself: every reopening lasts 10.
    let core = Machine::new(periods(10, 10, 2.0));
    assert!(!fail_at(&core, 0).unwrap().backed_off);
    let reopening = fail_at(&core, 10).unwrap(); // the trial, due at 10, fails
    assert_eq!(reopening.nanos, 10);
    assert!(!reopening.backed_off, "held at the cap: not lengthened");
    // With room under the cap it is lengthened, and says so.
    let core = Machine::new(periods(10, 100, 2.0));
    fail_at(&core, 0).unwrap();
    let reopening = fail_at(&core, 10).unwrap();
    assert_eq!(reopening.nanos, 20);
    assert!(reopening.backed_off);
}

#[test]
fn without_backoff_a_reopening_lasts_the_open_period_a_reload_set() {
    let core = Machine::new(periods(10, 100, 1.0));
    assert_eq!(fail_at(&core, 0).unwrap().nanos, 10);
    core.reconfigure(periods(20, 100, 1.0));
    let reopening = fail_at(&core, 10).unwrap();
    assert_eq!(
        (reopening.nanos, reopening.backed_off),
        (20, false),
        "the reloaded period, not the last one"
    );
}

#[test]
fn a_late_hint_ending_where_the_period_already_ends_changes_nothing() {
    let core = Machine::new(periods(10, 1_000, 1.0));
    let late = core.admit(|| 0).0.unwrap();
    fail_at(&core, 100).unwrap(); // open until 110
                                  // Lands at 105 asking for 5 more: until 110, where it ends anyway.
    assert_eq!(core.count(late, failure_hinted(5), || 105), None);
    let opening = core.reading().opening.unwrap();
    assert_eq!(
        (opening.nanos, opening.hint_nanos),
        (10, None),
        "not lengthened, so not the hint's"
    );
}

#[test]
fn no_jitter_draws_nothing_so_a_seed_gives_the_same_periods_once_jitter_is_on() {
    let jittered = |mut config: Config| {
        config.jitter = 0.5;
        config
    };
    // A fresh breaker with jitter from the start.
    let fresh = Machine::new(jittered(periods(1_000, 10_000, 1.0)));
    fresh.seed(7);
    let expected = fail_at(&fresh, 0).unwrap().nanos;
    assert!((1_000..1_500).contains(&expected));
    // One that opened and closed without jitter first, then reloaded with it.
    let reloaded = Machine::new(periods(1_000, 10_000, 1.0));
    reloaded.seed(7);
    assert_eq!(fail_at(&reloaded, 0).unwrap().nanos, 1_000);
    reloaded.manual(ManualAction::Reset, 10).unwrap();
    reloaded.reconfigure(jittered(periods(1_000, 10_000, 1.0)));
    assert_eq!(
        fail_at(&reloaded, 20).unwrap().nanos,
        expected,
        "the opening without jitter drew no number"
    );
}

/// A failure carrying the upstream's retry hint of `nanos`.
fn failure_hinted(nanos: u64) -> Verdict {
    Verdict::FAILURE.retry_after(Some(std::time::Duration::from_nanos(nanos)))
}
