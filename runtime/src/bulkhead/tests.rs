//! The bulkhead's protocol step by step: each test puts one step of a caller, a releaser
//! or a resize between the steps of another, at the point where a wrong step would
//! inflate, strand or misplace a permit, and reads the word and the line after it.
//! Deterministic: the interleavings are written out, not left to the scheduler (the
//! loom model checks try them all).
//!
//! Each runs twice, its body shared: on a bulkhead at its ceiling (a fixed bulkhead's
//! permits), and on an adaptive bulkhead whose limit is held low, far below its
//! ceiling, after its limiter lowered it under load ([`At`]).

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::line::Line;
use super::{Bulkhead, Limiter, FREE, WAITER};

const WAIT: Duration = Duration::from_secs(1);

/// Polls `future` once, with a waker that does nothing.
fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Where a test's bulkhead stands when the test starts: each step-by-step test below
/// runs at both, its body shared (`at_both!`).
#[derive(Debug, Clone, Copy)]
enum At {
    /// A bulkhead of its permits: a fixed one, or an adaptive one at its ceiling.
    Ceiling,
    /// An adaptive bulkhead whose limit is held low, at its floor, far below its
    /// ceiling ([`LOW_CEILING`]): built at the ceiling as a guard builds it, every
    /// permit taken, then sized down by its limiter while they were all in use (so it
    /// owed them), and every permit returned since (paying the debt).
    Low,
}

/// The ceiling of a bulkhead held low: `max_connections` 20 × 0.8.
const LOW_CEILING: usize = 16;

/// A bulkhead of tokio's semaphore, as a service has, of `permits` permits, at `at`.
fn bulkhead(at: At, permits: usize) -> Bulkhead {
    match at {
        At::Ceiling => Bulkhead::new(permits),
        At::Low => held_low(permits),
    }
}

/// An adaptive bulkhead of [`LOW_CEILING`] permits whose limit is `floor`, lowered
/// under load and held there (no call ends through a guard, so nothing is sampled):
/// its limiter starts at a ceiling of `floor` (`max_connections` of it ÷ 0.8) and a
/// reload widens the ceiling to [`LOW_CEILING`], keeping the limit.
fn held_low(floor: usize) -> Bulkhead {
    let system = |max_connections: usize| {
        let toml = format!(
            "[systems.sber]\nmax_connections = {max_connections}\nbulkhead = \"adaptive\"\nbulkhead_floor = {floor}\n"
        );
        let settings = outbound_guard_settings::Settings::parse(&toml, "test").expect("valid");
        settings.system("sber").expect("declared").clone()
    };
    let limiter = Limiter::new(&system((floor * 5).div_ceil(4)));
    assert_eq!(limiter.ceiling(), floor);
    let bulkhead = Bulkhead::new(LOW_CEILING);
    for _ in 0..LOW_CEILING {
        assert!(bulkhead.try_acquire());
    }
    limiter.reconfigure(&bulkhead, &system(20), true);
    assert_eq!(limiter.ceiling(), LOW_CEILING);
    assert_eq!(
        (limiter.limit(), bulkhead.permits()),
        (Some(floor), floor),
        "the limit is the floor, and the bulkhead's size"
    );
    assert_eq!(bulkhead.owed(), (LOW_CEILING - floor) as u64);
    for _ in 0..LOW_CEILING {
        bulkhead.release();
    }
    assert_eq!(
        (bulkhead.parts(), bulkhead.owed(), bulkhead.in_use()),
        ((0, floor as u64, 0), 0, 0),
        "the debt paid, the limit's permits free"
    );
    bulkhead
}

/// Two tests of one body taking an [`At`]: `NAME::at_the_ceiling` and `NAME::held_low`
/// (`async` for a body run in tokio's paused time).
macro_rules! at_both {
    ($name:ident) => {
        mod $name {
            #[test]
            fn at_the_ceiling() {
                super::$name(super::At::Ceiling);
            }

            #[test]
            fn held_low() {
                super::$name(super::At::Low);
            }
        }
    };
    (async $name:ident) => {
        mod $name {
            #[tokio::test(start_paused = true)]
            async fn at_the_ceiling() {
                super::$name(super::At::Ceiling).await;
            }

            #[tokio::test(start_paused = true)]
            async fn held_low() {
                super::$name(super::At::Low).await;
            }
        }
    };
}

impl<L: Line> Bulkhead<L> {
    /// `(callers counted waiting, free permits in the word, permits in the line)`.
    pub(super) fn parts(&self) -> (u64, u64, usize) {
        let word = self.word.load(crate::sync::Ordering::Acquire);
        (word >> 40, word & FREE, self.line.held())
    }

    /// The permits a shrink owes.
    pub(super) fn owed(&self) -> u64 {
        (self.word.load(crate::sync::Ordering::Acquire) >> 20) & FREE
    }
}

fn a_shrink_below_the_permits_in_use_revokes_none_and_takes_them_back_as_calls_end(at: At) {
    let bulkhead = bulkhead(at, 4);
    for _ in 0..3 {
        assert!(bulkhead.try_acquire());
    }
    bulkhead.resize(1);
    assert_eq!(bulkhead.permits(), 1);
    assert_eq!(
        bulkhead.in_use(),
        3,
        "the three calls still hold their permits"
    );
    assert!(!bulkhead.try_acquire(), "full: three in use of one");
    bulkhead.release();
    bulkhead.release();
    assert_eq!(bulkhead.in_use(), 1);
    assert!(!bulkhead.try_acquire(), "one in use of one");
    bulkhead.release();
    assert_eq!(bulkhead.in_use(), 0);
    assert!(bulkhead.try_acquire());
    assert!(!bulkhead.try_acquire());
}

fn a_grow_after_a_shrink_cancels_the_debt_first(at: At) {
    let bulkhead = bulkhead(at, 4);
    for _ in 0..4 {
        assert!(bulkhead.try_acquire());
    }
    bulkhead.resize(2); // owes 2
    bulkhead.resize(5); // pays the 2, adds 1
    assert_eq!(bulkhead.in_use(), 4);
    assert!(bulkhead.try_acquire());
    assert!(!bulkhead.try_acquire());
    for _ in 0..5 {
        bulkhead.release();
    }
    assert_eq!(bulkhead.in_use(), 0);
    let mut taken = 0;
    while bulkhead.try_acquire() {
        taken += 1;
    }
    assert_eq!(taken, 5);
}

async fn a_permit_released_while_someone_waits_goes_to_the_waiter_not_a_newcomer(at: At) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    let mut waiter = pin!(bulkhead.acquire(WAIT));
    assert!(poll_once(waiter.as_mut()).is_pending(), "full: it waits");
    bulkhead.release();
    assert!(
        !bulkhead.try_acquire(),
        "a newcomer does not take the permit the waiter is owed"
    );
    assert_eq!(poll_once(waiter.as_mut()), Poll::Ready(true));
    assert_eq!(bulkhead.in_use(), 1);
    bulkhead.release();
    assert_eq!(bulkhead.in_use(), 0);
    assert!(bulkhead.try_acquire(), "nobody waits: free again");
}

async fn a_permit_left_in_the_line_by_a_cancelled_waiter_is_taken_by_the_next_caller(at: At) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    {
        let mut waiter = pin!(bulkhead.acquire(WAIT));
        assert!(poll_once(waiter.as_mut()).is_pending());
        bulkhead.release(); // to the waiter, which is dropped before it takes it
    }
    assert_eq!(bulkhead.in_use(), 0, "the permit is back, in the line");
    assert!(bulkhead.try_acquire(), "found where the waiter left it");
    assert!(!bulkhead.try_acquire());
    bulkhead.release();
    assert!(bulkhead.try_acquire(), "and free again once returned");
}

async fn waiters_are_served_in_arrival_order_and_a_grow_serves_them_first(at: At) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    let mut first = pin!(bulkhead.acquire(WAIT));
    let mut second = pin!(bulkhead.acquire(WAIT));
    assert!(poll_once(first.as_mut()).is_pending());
    assert!(poll_once(second.as_mut()).is_pending());
    bulkhead.resize(2);
    assert!(
        !bulkhead.try_acquire(),
        "the new permit is owed to a waiter"
    );
    assert!(
        poll_once(second.as_mut()).is_pending(),
        "not before the first"
    );
    assert_eq!(poll_once(first.as_mut()), Poll::Ready(true));
    bulkhead.release();
    assert_eq!(poll_once(second.as_mut()), Poll::Ready(true));
    assert_eq!(bulkhead.in_use(), 2);
}

async fn a_caller_whose_wait_runs_out_holds_nothing_and_stops_counting_as_waiting(at: At) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    assert!(!bulkhead.acquire(WAIT).await);
    bulkhead.release();
    assert!(
        bulkhead.try_acquire(),
        "nobody waits any more: the permit came back free"
    );
}

fn a_permit_returned_between_a_callers_first_look_and_its_counting_itself_is_taken(at: At) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    assert!(
        !bulkhead.try_acquire(),
        "a caller's first look finds nothing"
    );
    bulkhead.release(); // the holder returns it before that caller counts itself
    assert_eq!(bulkhead.parts(), (0, 1, 0), "free in the word");
    assert!(
        bulkhead.count_waiting().is_none(),
        "it takes the permit rather than waiting for it"
    );
    assert_eq!(
        bulkhead.parts(),
        (0, 0, 0),
        "taken: nothing free, nobody waiting, nothing in the line"
    );
    assert_eq!(bulkhead.in_use(), 1);
    assert!(!bulkhead.try_acquire(), "one permit, one holder");
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 1, 0));
}

fn a_caller_that_finds_nothing_free_is_counted_waiting_until_it_leaves(at: At) {
    let bulkhead = bulkhead(at, 2);
    assert!(bulkhead.try_acquire());
    assert!(bulkhead.try_acquire());
    let first = bulkhead.count_waiting().expect("nothing free: it waits");
    let second = bulkhead.count_waiting().expect("nor for the second");
    assert_eq!(bulkhead.parts(), (2, 0, 0));
    drop(first);
    assert_eq!(bulkhead.parts(), (1, 0, 0), "one left");
    drop(second);
    assert_eq!(bulkhead.parts(), (0, 0, 0), "nobody waits");
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 1, 0), "the fast path is back");
}

fn a_permit_returned_while_nobody_waits_is_free_in_the_word_and_one_returned_while_someone_waits_goes_to_the_line(
    at: At,
) {
    let bulkhead = bulkhead(at, 2);
    assert!(bulkhead.try_acquire());
    assert!(bulkhead.try_acquire());
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 1, 0), "nobody waits: free");
    assert!(bulkhead.try_acquire());
    // Counted waiting, not yet in the semaphore's line: the word is exactly one waiter.
    let waiting = bulkhead.count_waiting().expect("it waits");
    assert_eq!(bulkhead.word.load(crate::sync::Ordering::Acquire), WAITER);
    bulkhead.release();
    assert_eq!(
        bulkhead.parts(),
        (1, 0, 1),
        "someone waits: to the line, not free in the word"
    );
    assert!(!bulkhead.try_acquire(), "a newcomer does not take it");
    drop(waiting);
    assert!(
        bulkhead.try_acquire(),
        "its waiter gone, the next caller finds it in the line"
    );
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    assert_eq!(bulkhead.in_use(), 2);
}

async fn a_waiter_whose_wait_runs_out_or_is_cancelled_is_uncounted_and_the_fast_path_comes_back(
    at: At,
) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    assert!(!bulkhead.acquire(WAIT).await, "timed out");
    assert_eq!(bulkhead.parts(), (0, 0, 0), "not counted any more");
    {
        let mut cancelled = pin!(bulkhead.acquire(WAIT));
        assert!(poll_once(cancelled.as_mut()).is_pending());
        assert_eq!(bulkhead.parts(), (1, 0, 0), "counted while it waits");
    }
    assert_eq!(bulkhead.parts(), (0, 0, 0), "not counted once dropped");
    bulkhead.release();
    assert_eq!(
        bulkhead.parts(),
        (0, 1, 0),
        "returned free to the word, not to the line"
    );
}

#[test]
fn the_largest_bulkhead_is_what_the_words_free_bits_hold_and_every_permit_fits_them() {
    let bulkhead: Bulkhead = Bulkhead::new(usize::MAX);
    assert_eq!(bulkhead.permits(), FREE as usize);
    assert_eq!(bulkhead.parts(), (0, FREE, 0));
    assert!(bulkhead.try_acquire());
    assert_eq!(bulkhead.in_use(), 1);
    bulkhead.release();
    assert_eq!(
        bulkhead.parts(),
        (0, FREE, 0),
        "all free again, in the word, nobody counted waiting"
    );
    bulkhead.resize(usize::MAX - 1);
    assert_eq!(bulkhead.permits(), FREE as usize, "clamped again");
    bulkhead.resize(1);
    assert_eq!(bulkhead.parts(), (0, 1, 0));
}

/// Leaves a permit in the line with nobody waiting: a caller counts itself waiting, a
/// holder returns its permit (to the line, the caller being counted), and the caller
/// leaves before taking it.
fn leave_one_in_the_line(bulkhead: &Bulkhead) {
    let waiting = bulkhead.count_waiting().expect("nothing free: it waits");
    bulkhead.release();
    drop(waiting);
}

fn a_shrink_takes_back_the_permits_left_in_the_line_then_the_free_ones_and_no_more(at: At) {
    let bulkhead = bulkhead(at, 4);
    for _ in 0..4 {
        assert!(bulkhead.try_acquire());
    }
    leave_one_in_the_line(&bulkhead);
    leave_one_in_the_line(&bulkhead);
    bulkhead.release();
    assert_eq!(
        bulkhead.parts(),
        (0, 1, 2),
        "one free in the word, two in the line"
    );
    assert_eq!(bulkhead.in_use(), 1);
    bulkhead.resize(3);
    assert_eq!(bulkhead.parts(), (0, 1, 1), "one of the line's");
    bulkhead.resize(1);
    assert_eq!(
        bulkhead.parts(),
        (0, 0, 0),
        "the line's other, then the word's"
    );
    assert_eq!(bulkhead.owed(), 0);
    assert_eq!(bulkhead.in_use(), 1);
    assert!(!bulkhead.try_acquire(), "one permit, one holder");
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 1, 0));
}

fn a_shrink_owes_what_neither_the_word_nor_the_line_holds(at: At) {
    let bulkhead = bulkhead(at, 4);
    for _ in 0..4 {
        assert!(bulkhead.try_acquire());
    }
    leave_one_in_the_line(&bulkhead);
    assert_eq!(bulkhead.parts(), (0, 0, 1));
    bulkhead.resize(1);
    assert_eq!(
        bulkhead.parts(),
        (0, 0, 0),
        "the line's one taken back, nothing free"
    );
    assert_eq!(bulkhead.owed(), 2);
    assert_eq!(bulkhead.in_use(), 3);
    assert!(!bulkhead.try_acquire(), "three in use of one");
    bulkhead.release();
    assert_eq!(bulkhead.owed(), 1, "kept to pay the debt");
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 0, 0), "paid");
    assert_eq!(bulkhead.owed(), 0);
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 1, 0));
    assert_eq!(bulkhead.in_use(), 0);
}

async fn a_grow_while_someone_waits_serves_the_waiter_and_frees_the_rest(at: At) {
    let bulkhead = bulkhead(at, 1);
    assert!(bulkhead.try_acquire());
    let mut waiter = pin!(bulkhead.acquire(WAIT));
    assert!(poll_once(waiter.as_mut()).is_pending());
    bulkhead.resize(3);
    assert_eq!(poll_once(waiter.as_mut()), Poll::Ready(true));
    // The waiter gone, the grow's other permit came to the line (someone waited then).
    assert_eq!(bulkhead.parts(), (0, 0, 1));
    assert!(bulkhead.try_acquire());
    assert!(!bulkhead.try_acquire());
    for _ in 0..3 {
        bulkhead.release();
    }
    assert_eq!(bulkhead.parts(), (0, 3, 0));
}

fn a_shrink_counts_what_it_owes_in_the_word_so_no_release_frees_a_permit_owed(at: At) {
    let bulkhead = bulkhead(at, 2);
    assert!(bulkhead.try_acquire());
    assert!(bulkhead.try_acquire());
    bulkhead.resize(1);
    assert_eq!(bulkhead.owed(), 1);
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    assert!(
        !bulkhead.try_acquire(),
        "nothing free: owing one is not a free permit (nor are the free bits' 2^20 - 1)"
    );
    assert!(bulkhead.count_waiting().is_some(), "a caller waits");
    assert_eq!(bulkhead.owed(), 1);
    bulkhead.release();
    assert_eq!(bulkhead.owed(), 0, "the first release pays it");
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    assert!(!bulkhead.try_acquire(), "one permit, one holder");
    bulkhead.resize(3); // nothing owed: both new permits free
    assert_eq!(bulkhead.parts(), (0, 2, 0));
    bulkhead.resize(1); // both free ones taken back
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    assert!(!bulkhead.try_acquire());
    bulkhead.resize(0); // at least one: nothing changes
    assert_eq!(bulkhead.permits(), 1);
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 1, 0));
}

async fn a_grow_cancels_what_a_shrink_owes_before_it_serves_the_waiters(at: At) {
    let bulkhead = bulkhead(at, 3);
    for _ in 0..3 {
        assert!(bulkhead.try_acquire());
    }
    bulkhead.resize(1); // two owed
    let mut waiter = pin!(bulkhead.acquire(WAIT));
    assert!(poll_once(waiter.as_mut()).is_pending());
    assert_eq!(bulkhead.parts(), (1, 0, 0), "one waiter");
    assert_eq!(bulkhead.owed(), 2);
    bulkhead.resize(4); // cancels the two owed, and one more for the waiter
    assert_eq!(bulkhead.owed(), 0);
    assert_eq!(poll_once(waiter.as_mut()), Poll::Ready(true));
    assert_eq!(bulkhead.parts(), (0, 0, 0));
    assert_eq!(bulkhead.in_use(), 4);
    for _ in 0..4 {
        bulkhead.release();
    }
    assert_eq!(bulkhead.parts(), (0, 4, 0));
}

fn a_release_that_finds_on_its_second_look_what_is_owed_and_who_waits_decides_by_that(at: At) {
    // The slow path alone, as a release reaches it after its first look saw someone
    // waiting or something owed: it looks again.
    let bulkhead = bulkhead(at, 3);
    for _ in 0..3 {
        assert!(bulkhead.try_acquire());
    }
    // The waiter it saw has gone: the permit is free.
    drop(bulkhead.count_waiting().expect("it waits"));
    bulkhead.release_slow();
    assert_eq!(bulkhead.parts(), (0, 1, 0));
    assert!(bulkhead.try_acquire());
    // Someone waits: to the line.
    let waiting = bulkhead.count_waiting().expect("it waits");
    bulkhead.release_slow();
    assert_eq!(bulkhead.parts(), (1, 0, 1));
    drop(waiting);
    assert!(bulkhead.try_acquire(), "left in the line, taken from there");
    // Something owed, and someone waiting: the debt first.
    bulkhead.resize(2);
    assert_eq!(bulkhead.owed(), 1);
    let waiting = bulkhead.count_waiting().expect("it waits");
    bulkhead.release_slow();
    assert_eq!((bulkhead.owed(), bulkhead.parts()), (0, (1, 0, 0)));
    drop(waiting);
    bulkhead.release();
    bulkhead.release();
    assert_eq!(bulkhead.parts(), (0, 2, 0));
}

at_both!(a_shrink_below_the_permits_in_use_revokes_none_and_takes_them_back_as_calls_end);
at_both!(a_grow_after_a_shrink_cancels_the_debt_first);
at_both!(a_permit_returned_between_a_callers_first_look_and_its_counting_itself_is_taken);
at_both!(a_caller_that_finds_nothing_free_is_counted_waiting_until_it_leaves);
at_both!(a_permit_returned_while_nobody_waits_is_free_in_the_word_and_one_returned_while_someone_waits_goes_to_the_line);
at_both!(a_shrink_takes_back_the_permits_left_in_the_line_then_the_free_ones_and_no_more);
at_both!(a_shrink_owes_what_neither_the_word_nor_the_line_holds);
at_both!(a_shrink_counts_what_it_owes_in_the_word_so_no_release_frees_a_permit_owed);
at_both!(async a_permit_released_while_someone_waits_goes_to_the_waiter_not_a_newcomer);
at_both!(async a_permit_left_in_the_line_by_a_cancelled_waiter_is_taken_by_the_next_caller);
at_both!(async waiters_are_served_in_arrival_order_and_a_grow_serves_them_first);
at_both!(async a_caller_whose_wait_runs_out_holds_nothing_and_stops_counting_as_waiting);
at_both!(async a_waiter_whose_wait_runs_out_or_is_cancelled_is_uncounted_and_the_fast_path_comes_back);
at_both!(async a_grow_while_someone_waits_serves_the_waiter_and_frees_the_rest);
at_both!(async a_grow_cancels_what_a_shrink_owes_before_it_serves_the_waiters);
at_both!(a_release_that_finds_on_its_second_look_what_is_owed_and_who_waits_decides_by_that);
