//! The two deadlines the layer keeps: the caller's own (the request's `grpc-timeout`),
//! which ends a call uncounted, and the guard's `total_timeout`, sent on to the channel
//! as the budget left, which the channel may hit on the same tick as the guard.

use std::error::Error;
use std::pin::Pin;
use std::task::Context;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::status::is_tonic_timeout;

pin_project_lite::pin_project! {
    /// The caller's deadline, if its request had one, and the timer that wakes the
    /// call's holder at it (set up when first polled). The response future and the
    /// body each hold one for the same instant.
    #[derive(Debug)]
    pub(crate) struct CallerDeadline {
        at: Option<Instant>,
        #[pin]
        sleep: Option<Sleep>,
    }
}

impl CallerDeadline {
    pub(crate) fn new(at: Option<Instant>) -> Self {
        CallerDeadline { at, sleep: None }
    }

    /// The instant, if the caller set one.
    pub(crate) fn at(&self) -> Option<Instant> {
        self.at
    }

    /// Whether the caller's deadline has passed; registers for its wake-up otherwise.
    pub(crate) fn passed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> bool {
        let mut this = self.project();
        let Some(at) = *this.at else {
            return false;
        };
        if Instant::now() >= at {
            return true;
        }
        if this.sleep.is_none() {
            this.sleep.set(Some(tokio::time::sleep_until(at)));
        }
        this.sleep
            .as_pin_mut()
            .is_some_and(|sleep| std::future::Future::poll(sleep, cx).is_ready())
    }
}

/// Whether a call's error is one of the two deadlines the layer keeps: the caller's
/// has passed, or the channel's own timeout, which tonic sets from the `grpc-timeout`
/// we sent (`sent_due`), fired with it. Either way a timer of ours is due and ends the
/// call itself: without this, the channel's timer winning the race on a busy machine
/// would turn the guard's timeout into a transport error. tokio's timers fire on
/// millisecond ticks, hence the millisecond of slack. A shorter timeout of the
/// channel's own (`Endpoint::timeout`) fires earlier and is the system's failure.
pub(crate) fn timed_out_by_us(
    error: &(dyn Error + 'static),
    deadline: Option<Instant>,
    sent_due: Instant,
) -> bool {
    let now = Instant::now();
    deadline.is_some_and(|at| now >= at)
        || (now + Duration::from_millis(1) >= sent_due && is_tonic_timeout(error))
}
