//! The core on its own, sequentially: what no interleaving is needed to show.

use super::state::{Config, Core, State};
use super::ManualAction;

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
            let core = Core::at_generation(config(window, 2), start);
            let stale = core.admit(|| 0).0.unwrap();
            let jumped = Core::at_generation(config(window, 2), start + jump);
            // The same ticket, taken to a core that has gone through `jump` transitions.
            assert_eq!(jumped.record(stale, true, || 0), None);
            assert_eq!(jumped.reading().calls, 0, "start {start}, window {window}");
            // And the real thing: 256 transitions in between (a reset of a closed
            // breaker is none, so force open and reset).
            for _ in 0..128 {
                core.manual(ManualAction::ForceOpen, 0).unwrap();
                core.manual(ManualAction::Reset, 0).unwrap();
            }
            assert_eq!(core.record(stale, true, || 0), None);
            assert_eq!(core.reading().calls, 0);
            assert_eq!(core.state(), State::Closed);
            while core.next_change().is_some() {}
        }
    }
}

#[test]
fn a_success_into_a_full_window_of_successes_is_skipped_and_changes_nothing() {
    let core = Core::new(config(3, 2));
    for _ in 0..3 {
        let ticket = core.admit(|| 0).0.unwrap();
        assert_eq!(core.record(ticket, false, || 0), None);
    }
    assert_eq!((core.reading().failures, core.reading().calls), (0, 3));
    let ticket = core.admit(|| 0).0.unwrap();
    assert_eq!(core.record(ticket, false, || 0), None);
    assert_eq!((core.reading().failures, core.reading().calls), (0, 3));
    // A failure still lands: 1 of 3 is below 50%; a second one opens it.
    let ticket = core.admit(|| 0).0.unwrap();
    assert_eq!(core.record(ticket, true, || 0), None);
    assert_eq!(core.failure_rate(), 1.0 / 3.0);
    let ticket = core.admit(|| 0).0.unwrap();
    assert_eq!(core.record(ticket, true, || 5).unwrap().to, State::Open);
    // Every transition is queued, in order.
    let queued = core.next_change().unwrap();
    assert_eq!(
        (queued.from, queued.to, queued.at_nanos),
        (State::Closed, State::Open, 5)
    );
    assert!(core.next_change().is_none());
    assert!(!core.has_changes());
}
