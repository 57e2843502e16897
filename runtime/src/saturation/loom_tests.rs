//! The saturation rule under loom: slow calls ending and waiters claiming at the same
//! time never let more waiters count than slow calls were seen, never count a waiter
//! unless every permit was held by a slow call, and leave the word consistent.

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::SlowHolders;

#[test]
fn waiters_never_outnumber_the_slow_calls_and_lapsed_vouchers_stay_gone() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        // Two permits, both held by calls that were counted slow.
        let slow = Arc::new(SlowHolders::default());
        slow.counted_slow();
        slow.counted_slow();
        let claimed = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let (slow, claimed) = (Arc::clone(&slow), Arc::clone(&claimed));
                thread::spawn(move || {
                    if slow.claim(2) {
                        claimed.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        // Meanwhile one slow call ends: from then on the bulkhead is not all slow.
        let ender = {
            let slow = Arc::clone(&slow);
            thread::spawn(move || slow.ended())
        };
        for waiter in waiters {
            waiter.join().unwrap();
        }
        ender.join().unwrap();
        let claimed = claimed.load(Ordering::SeqCst);
        assert!(claimed <= 2, "{claimed} waiters counted for 2 slow calls");
        assert_eq!(slow.held(), 1);
        // One slow call left of two permits: nothing more can be claimed.
        assert!(!slow.claim(2));
        slow.ended();
        assert_eq!(slow.held(), 0);
        slow.counted_slow();
        assert!(slow.claim(1), "a new slow call vouches again");
        assert!(!slow.claim(1), "but only once");
    });
}
