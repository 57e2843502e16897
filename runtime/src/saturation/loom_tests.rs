//! The saturation rule under loom: slow calls ending and turning slow while a waiter
//! reads the episode never let the waiter count across an end, and leave the word
//! consistent.

use loom::sync::Arc;
use loom::thread;

use super::SlowHolders;

#[test]
fn a_wait_that_spans_the_end_of_a_slow_call_never_counts() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        // Two permits, both held by calls that were counted slow.
        let slow = Arc::new(SlowHolders::default());
        slow.counted_slow();
        slow.counted_slow();
        let began = slow.slow_held().expect("every permit is slow-held");
        // Meanwhile one slow call ends and the next call holding its permit turns slow:
        // saturated again, in another episode.
        let churn = {
            let slow = Arc::clone(&slow);
            thread::spawn(move || {
                slow.ended();
                slow.counted_slow();
            })
        };
        // A second waiter begins and ends at any point of that.
        let other = {
            let slow = Arc::clone(&slow);
            thread::spawn(move || {
                let began = slow.slow_held();
                let counted = began.is_some_and(|e| slow.saturated_since(2, e));
                (began, counted)
            })
        };
        churn.join().unwrap();
        let (other_began, other_counted) = other.join().unwrap();
        // Whatever the interleaving, a wait that began before the end does not count
        // once the end has happened, even though every permit is slow-held again.
        assert!(!slow.saturated_since(2, began));
        assert_eq!(slow.held(), 2);
        let now = slow.slow_held().expect("slow-held again");
        assert_ne!(now, began, "a new episode");
        assert!(slow.saturated_since(2, now));
        // The other waiter counted only if it saw one episode throughout.
        if other_counted {
            assert!(other_began.is_some());
        }
        slow.ended();
        slow.ended();
        assert_eq!(slow.held(), 0);
        assert_eq!(slow.slow_held(), None);
    });
}
