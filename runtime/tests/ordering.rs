//! Transitions reach every observer in the order they happened, whichever threads made
//! them, and once the breaker is quiet what observers were last told is its true state.
//! Real threads, a bounded number of rounds.

use outbound_guard::Verdict;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread;

use outbound_guard::{Guard, Observer, Settings, State, Transition};

/// Every transition an observer was told, in the order it was told.
#[derive(Default)]
struct Chain(Mutex<Vec<(State, State)>>);

impl Observer for Chain {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.from, t.to));
        // Widen the window in which another thread's delivery could cross this one.
        thread::yield_now();
    }
}

impl Chain {
    /// Panics unless each transition starts where the one before ended; returns the
    /// state the last one ended in.
    fn check(&self) -> State {
        let chain = self.0.lock().unwrap();
        let mut at = State::Closed;
        for (i, &(from, to)) in chain.iter().enumerate() {
            assert_eq!(
                from,
                at,
                "transition {i} of {}: {:?}",
                chain.len(),
                &chain[i.saturating_sub(3)..(i + 3).min(chain.len())]
            );
            at = to;
        }
        at
    }

    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

fn guard(observers: Vec<Arc<dyn Observer>>) -> Guard {
    // Opens on one failure of two, open for 50 µs, one trial.
    let settings = Settings::parse(
        "[systems.sber]\ncb_window_size = 2\ncb_min_calls = 1\ncb_failure_rate = 0.5\ncb_open_duration = 0.00005\ncb_half_open_calls = 1",
        "inline",
    )
    .unwrap();
    let builder = Guard::builder(settings.system("sber").unwrap());
    observers
        .into_iter()
        .fold(builder, outbound_guard::GuardBuilder::observer)
        .build()
}

/// A small deterministic generator, one per thread.
fn coin(seed: &mut u64) -> bool {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed % 3 == 0
}

#[test]
fn observers_see_every_threads_transitions_in_order() {
    let (first, second) = (Arc::new(Chain::default()), Arc::new(Chain::default()));
    let breaker = Arc::new(guard(vec![first.clone(), second.clone()]));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let breaker = breaker.clone();
            thread::spawn(move || {
                let mut seed = 0x9e37_79b9_7f4a_7c15 ^ (t + 1);
                for i in 0..20_000u32 {
                    if let Ok(permit) = breaker.breaker().try_acquire() {
                        permit.finish(Verdict::new(coin(&mut seed)));
                    }
                    // Now and then an operator's actions, from every thread.
                    if i % 1_000 == 999 {
                        breaker
                            .breaker()
                            .act(outbound_guard::ManualAction::ForceOpen);
                        breaker.breaker().act(outbound_guard::ManualAction::Reset);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Quiet now: the last transition each observer saw is the breaker's state.
    assert!(first.len() > 100, "only {} transitions", first.len());
    assert_eq!(first.len(), second.len());
    assert_eq!(first.check(), breaker.breaker().state());
    assert_eq!(second.check(), breaker.breaker().state());
}

/// Resets the breaker from inside `on_transition` whenever it is forced open.
#[derive(Default)]
struct ResetsForcedOpen {
    breaker: OnceLock<Weak<Guard>>,
}

impl Observer for ResetsForcedOpen {
    fn on_transition(&self, t: &Transition<'_>) {
        if t.to == State::ForcedOpen {
            if let Some(breaker) = self.breaker.get().and_then(Weak::upgrade) {
                breaker.breaker().act(outbound_guard::ManualAction::Reset);
            }
        }
    }
}

#[test]
fn an_observer_acting_on_its_breaker_is_told_of_that_too_in_order() {
    let chain = Arc::new(Chain::default());
    let resetter = Arc::new(ResetsForcedOpen::default());
    let breaker = Arc::new(guard(vec![resetter.clone(), chain.clone()]));
    resetter.breaker.set(Arc::downgrade(&breaker)).ok().unwrap();
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let breaker = breaker.clone();
            thread::spawn(move || {
                for _ in 0..500 {
                    breaker
                        .breaker()
                        .act(outbound_guard::ManualAction::ForceOpen);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(chain.check(), State::Closed);
    assert_eq!(breaker.breaker().state(), State::Closed);
    let told = chain.0.lock().unwrap().clone();
    assert!(told.chunks(2).all(|pair| pair
        == [
            (State::Closed, State::ForcedOpen),
            (State::ForcedOpen, State::Closed)
        ]));
}
