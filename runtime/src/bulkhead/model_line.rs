//! A [`Line`] of loom's primitives, standing in for tokio's semaphore in the model
//! checks of the bulkhead's protocol (`loom_tests.rs`): fair, first come first served,
//! with tokio's rules (a permit added goes to the oldest waiter; a permit is taken
//! without waiting only when no waiter is owed it; a waiter dropped after it was handed
//! a permit hands it on). Nothing here is clever: every step takes one lock.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use loom::sync::Mutex;

use super::line::Line;

/// The line: the permits it holds, and its waiters oldest first.
#[derive(Debug, Default)]
pub(crate) struct ModelLine(Mutex<Queue>);

#[derive(Debug, Default)]
struct Queue {
    /// Permits nobody in line was handed.
    held: usize,
    /// Waiters not yet handed a permit, oldest first.
    waiting: VecDeque<(u64, Waker)>,
    /// Waiters handed a permit they have not taken yet.
    handed: Vec<u64>,
    next_id: u64,
}

impl Queue {
    fn add(&mut self, n: usize) {
        for _ in 0..n {
            match self.waiting.pop_front() {
                Some((id, waker)) => {
                    self.handed.push(id);
                    waker.wake();
                }
                None => self.held += 1,
            }
        }
    }
}

impl Line for ModelLine {
    const MAX_PERMITS: usize = usize::MAX >> 3;

    fn empty() -> Self {
        ModelLine::default()
    }

    fn add(&self, n: usize) {
        self.0.lock().unwrap().add(n);
    }

    fn try_take(&self) -> bool {
        let mut queue = self.0.lock().unwrap();
        // Permits are held only while nobody waits (`add` serves the waiters first).
        let took = queue.held > 0;
        queue.held -= usize::from(took);
        took
    }

    fn take_back(&self, n: usize) -> usize {
        let mut queue = self.0.lock().unwrap();
        let taken = queue.held.min(n);
        queue.held -= taken;
        taken
    }

    fn held(&self) -> usize {
        self.0.lock().unwrap().held
    }

    fn wait(&self) -> impl Future<Output = ()> + Send + '_ {
        Wait {
            line: self,
            place: Place::Arriving,
        }
    }
}

/// A waiter, from its first poll on.
struct Wait<'a> {
    line: &'a ModelLine,
    place: Place,
}

/// Where a waiter stands.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// Not polled yet.
    Arriving,
    /// In line under this id, or handed a permit it has not taken yet.
    InLine(u64),
    /// It took its permit.
    Done,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut queue = self.line.0.lock().unwrap();
        match self.place {
            Place::Arriving if queue.held > 0 => {
                queue.held -= 1;
                drop(queue);
                self.place = Place::Done;
                Poll::Ready(())
            }
            Place::Arriving => {
                let id = queue.next_id;
                queue.next_id += 1;
                queue.waiting.push_back((id, cx.waker().clone()));
                drop(queue);
                self.place = Place::InLine(id);
                Poll::Pending
            }
            Place::InLine(id) => {
                if let Some(at) = queue.handed.iter().position(|&h| h == id) {
                    queue.handed.swap_remove(at);
                    drop(queue);
                    self.place = Place::Done;
                    return Poll::Ready(());
                }
                if let Some(entry) = queue.waiting.iter_mut().find(|(w, _)| *w == id) {
                    entry.1 = cx.waker().clone();
                }
                Poll::Pending
            }
            Place::Done => panic!("a wait polled after it took its permit"),
        }
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        let Place::InLine(id) = self.place else {
            return; // never in line, or its permit taken
        };
        let mut queue = self.line.0.lock().unwrap();
        if let Some(at) = queue.handed.iter().position(|&h| h == id) {
            // Handed a permit it will never take: on to the next waiter.
            queue.handed.swap_remove(at);
            queue.add(1);
        } else {
            queue.waiting.retain(|(w, _)| *w != id);
        }
    }
}
