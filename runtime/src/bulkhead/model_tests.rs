//! Property test: random sequences of callers taking permits at once or waiting in line,
//! waiters polled or cancelled, permits returned and the bulkhead resized (as an
//! adaptive limit and a reload do), driven against the real bulkhead and against a
//! sequential reference model of its rules, with the size held low (1 or 2 of a
//! ceiling of 8) as well as at the ceiling. Every answer, the permits in use and the
//! size must agree after every step.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;

use super::Bulkhead;

/// The ceiling: the bulkhead is built with it and resized from it.
const CEILING: usize = 8;

#[derive(Debug, Clone)]
enum Op {
    /// A caller arrives: a permit at once, or it waits in line.
    Arrive,
    /// The waiter at `index % waiters` is polled.
    Poll(usize),
    /// The waiter at `index % waiters` gives up.
    Cancel(usize),
    /// The holder at `index % holders` returns its permit.
    Release(usize),
    /// The limit moves to `size`.
    Resize(usize),
}

/// The rules: a size; permits held; waiters in arrival order, each granted a permit or
/// not. A permit goes to the oldest waiter not granted one whenever fewer than the size
/// are held or granted; a newcomer gets one at once only while every waiter has been
/// granted one (nobody is overtaken). A granted waiter that gives up returns its permit
/// as a holder does.
#[derive(Debug)]
struct Model {
    size: usize,
    held: usize,
    waiters: VecDeque<(u32, bool)>,
}

impl Model {
    fn granted(&self) -> usize {
        self.waiters.iter().filter(|(_, granted)| *granted).count()
    }

    fn in_use(&self) -> usize {
        self.held + self.granted()
    }

    fn grant(&mut self) {
        while self.in_use() < self.size {
            match self.waiters.iter_mut().find(|(_, granted)| !granted) {
                Some(waiter) => waiter.1 = true,
                None => return,
            }
        }
    }

    /// A caller arrives: `true` if it holds a permit at once.
    fn arrive(&mut self, id: u32) -> bool {
        if self.waiters.iter().all(|(_, granted)| *granted) && self.in_use() < self.size {
            self.held += 1;
            true
        } else {
            self.waiters.push_back((id, false));
            false
        }
    }
}

type Waiting<'a> = (u32, Pin<Box<dyn Future<Output = bool> + 'a>>);

fn poll(future: &mut Pin<Box<dyn Future<Output = bool> + '_>>) -> Poll<bool> {
    future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
}

fn run(low: usize, ops: &[Op]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let bulkhead: Bulkhead = Bulkhead::new(CEILING);
        bulkhead.resize(low);
        let mut model = Model {
            size: low,
            held: 0,
            waiters: VecDeque::new(),
        };
        let mut waiting: Vec<Waiting<'_>> = Vec::new();
        let mut holders = 0usize;
        for (id, op) in (0u32..).zip(ops) {
            step(&bulkhead, &mut model, &mut waiting, &mut holders, id, op);
            model.grant();
            assert_eq!(holders, model.held, "after {op:?}");
            assert_eq!(bulkhead.in_use(), model.in_use(), "after {op:?}: {model:?}");
            assert_eq!(bulkhead.permits(), model.size);
        }
    });
}

fn step<'a>(
    bulkhead: &'a Bulkhead,
    model: &mut Model,
    waiting: &mut Vec<Waiting<'a>>,
    holders: &mut usize,
    id: u32,
    op: &Op,
) {
    match *op {
        Op::Arrive => {
            let mut future: Pin<Box<dyn Future<Output = bool>>> =
                Box::pin(bulkhead.acquire(Duration::from_secs(3600)));
            let now = poll(&mut future) == Poll::Ready(true);
            assert_eq!(now, model.arrive(id), "arrival {id}: {model:?}");
            if now {
                *holders += 1;
            } else {
                waiting.push((id, future));
            }
        }
        Op::Poll(i) if !waiting.is_empty() => {
            let i = i % waiting.len();
            let at = model
                .waiters
                .iter()
                .position(|w| w.0 == waiting[i].0)
                .unwrap();
            let granted = model.waiters[at].1;
            let ready = poll(&mut waiting[i].1);
            assert_eq!(
                ready.is_ready(),
                granted,
                "waiter {}: {model:?}",
                waiting[i].0
            );
            if granted {
                drop(waiting.remove(i));
                model.waiters.remove(at);
                model.held += 1;
                *holders += 1;
            }
        }
        Op::Cancel(i) if !waiting.is_empty() => {
            let (id, future) = waiting.remove(i % waiting.len());
            drop(future);
            model.waiters.retain(|w| w.0 != id);
        }
        Op::Release(i) if *holders > 0 => {
            let _ = i;
            bulkhead.release();
            *holders -= 1;
            model.held -= 1;
        }
        Op::Resize(size) => {
            bulkhead.resize(size);
            model.size = size;
        }
        _ => {}
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Arrive),
        3 => any::<usize>().prop_map(Op::Poll),
        1 => any::<usize>().prop_map(Op::Cancel),
        4 => any::<usize>().prop_map(Op::Release),
        1 => prop_oneof![Just(1usize), Just(2), 1..=CEILING].prop_map(Op::Resize),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_bulkhead_agrees_with_the_reference_model_at_a_low_limit_and_at_the_ceiling(
        low in prop_oneof![Just(1usize), Just(2), Just(CEILING)],
        ops in prop::collection::vec(op(), 1..80),
    ) {
        run(low, &ops);
    }
}

#[test]
fn scripted_corners_agree_with_the_model() {
    use Op::{Arrive, Cancel, Poll, Release, Resize};
    // A shrink below the permits in use, waiters behind it, a grow that pays the debt
    // first, a granted waiter that gives up.
    run(
        CEILING,
        &[
            Arrive,
            Arrive,
            Arrive,
            Resize(1),
            Arrive,
            Arrive,
            Release(0),
            Poll(0),
            Release(0),
            Poll(0),
            Release(0),
            Poll(0),
            Resize(3),
            Poll(1),
            Cancel(0),
            Arrive,
            Poll(0),
        ],
    );
    // Held low from the start: one permit.
    run(
        1,
        &[
            Arrive,
            Arrive,
            Arrive,
            Release(0),
            Cancel(0),
            Poll(0),
            Arrive,
            Poll(0),
        ],
    );
    // A waiter handed a permit gives up while a shrink owes one: its permit pays the
    // debt rather than going to the next waiter past the size (found by the property).
    run(
        2,
        &[
            Arrive,
            Arrive,
            Arrive,
            Release(0),
            Arrive,
            Arrive,
            Release(0),
            Resize(1),
            Arrive,
            Cancel(0),
            Poll(0),
            Poll(1),
        ],
    );
    // A grow hands one permit to a waiter and leaves one for a newcomer, who overtakes
    // nobody (the waiter has its own).
    run(1, &[Arrive, Arrive, Resize(3), Arrive, Poll(0)]);
}
