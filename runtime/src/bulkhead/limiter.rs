//! The adaptive limit of a bulkhead (`bulkhead = "adaptive"`): how many of the
//! bulkhead's permits (its ceiling, `max_connections × 0.8`) calls may hold now, never
//! fewer than `bulkhead_floor`, following the upstream's latency against its baseline.
//!
//! Only successes are samples, slow ones included: failures, timeouts, panics and
//! cancelled calls are the breaker's business, so a burst of fast 5xx moves nothing, and
//! a hang (no call ends) leaves the limit where it was. The successes are averaged in
//! windows of at least [`MIN_SAMPLES`] calls (and at least the limit's worth). At each
//! window's end:
//!
//! - above [`SHRINK_ABOVE`] × the baseline, calls queue at the upstream: the limit goes
//!   to `limit / ratio` (what the upstream served at the baseline's latency, the
//!   ratio's share of the calls in flight), rounded up (but for a twentieth of a
//!   permit), never below the floor, where that is fewer permits: `workers + 1` in
//!   flight on `workers` averages `(workers + 1) / workers` × the baseline and comes
//!   back to `workers`, while a slower window within a permit's rounding moves
//!   nothing. Calls admitted before that are not sampled (they queued behind the old
//!   limit);
//! - below [`GROW_BELOW`] × the baseline, and the bulkhead was full during the window
//!   (some call ended with the limit's worth in flight), the slow start doubles the
//!   limit; after it, a probe starts (below);
//! - otherwise the limit stays.
//!
//! The limit settles at the upstream's workers, where no admitted call waits there,
//! rather than above them, where one call in `limit` waits a whole service time (and
//! its windows average `limit / workers` × the baseline, a ratio that tells the
//! queueing apart from noise only when the workers are few).
//! More capacity (the upstream's, coming back) shows only to more calls in flight, so
//! the limiter probes for it, rarely and cheaply: a probe tries more permits over the
//! limit (one, doubled by each probe kept in a row, up to the ceiling; one again after
//! a probe fails or a cut); the first call admitted under them that ends takes them
//! back (the bulkhead is sized to the limit again, so one turn of calls at most is
//! admitted under them), and
//!
//! - a success above [`PROBE_ABOVE`] × the baseline meanwhile queued: the probe ends
//!   at once, the limit is what it was, and the next probe waits a back-off, counted
//!   in successes (the calls a probe may delay are a share of the calls), that starts
//!   at [`PROBE_BACKOFF`] and doubles with each probe that fails, up to
//!   [`PROBE_EVERY`], or [`PROBE_WAIT`] if fewer come. On an upstream whose workers
//!   are all busy a probe delays one call by at most a service time: under one call
//!   in a hundred, at any rate;
//! - a success [`PROBE_JUDGED`] × the baseline after the permits were taken back with
//!   none queued keeps the probe: its permits are the limit, the back-off is reset,
//!   and the next window without queueing probes again, with twice the permits (2 →
//!   3 → 5 → 8 within 1.2 s at 100 ms a call).
//!
//! The baseline is the lowest window average seen over the last [`PERIODS`] periods,
//! each period of a length drawn between 2 and 4 minutes (jittered, so the replicas'
//! re-measurements spread): each period's end drops the oldest period's lowest, so a
//! baseline can rise only after a whole memory (20 to 40 minutes) of windows slower
//! than it, never during a ten-minute degradation, and falls at once when a window is
//! faster. Re-measuring is passive: the calls the limit lets through are measured, and
//! the limit is never lowered to measure.
//!
//! A window ends early at a jump: a success above [`JUMP_ABOVE`] × the baseline (above
//! the twice the baseline that a call waiting behind a probe gives, so a settled
//! limit does not jump) cuts the limit to `limit / ratio` on that call's ratio at once,
//! without waiting for the window's other calls, which queue behind the old limit
//! meanwhile; a probe under way ends. A window ended early is not offered to the
//! baseline.
//!
//! A replica starts at a quarter of the ceiling (rounded up, at least the floor) and
//! doubles the limit each window whose latency stays below [`GROW_BELOW`] × the
//! baseline, up to the ceiling (a slow start): its first windows, with a quarter of
//! the permits in flight, measure the upstream's latency before this replica's calls
//! queue there, which a start at the ceiling in front of an upstream that already
//! queues would take for its baseline; a quarter rather than the floor, so that the
//! start costs a healthy upstream little (under a second at 100 ms a call and the
//! guide's 8 permits). A restart forgets the baseline and starts again.
//!
//! Every change happens under one lock, so concurrent updates (windows ending on two
//! threads, a reload) never lose one another, and the bulkhead is resized under it
//! too: the bulkhead's resize needs its callers serialised. The lock is taken only in
//! adaptive mode, once per success.

use std::hash::BuildHasher;
use std::time::Duration;

use outbound_guard_settings::SystemSettings;
use tokio::time::Instant;

use crate::sync::{AtomicUsize, Mutex, MutexGuard, Ordering};

/// What the limiter sizes: the bulkhead ([`Bulkhead`](super::Bulkhead) in a service).
pub(crate) trait Resize {
    /// Permits held now.
    fn in_use(&self) -> usize;
    /// The size now.
    fn size(&self) -> usize;
    /// Sizes it to `size`, revoking no permit held; callers serialise.
    fn resize(&self, size: usize);
}

/// A window's average above this many times the baseline: the upstream queues; the
/// limit comes down to `limit / ratio` where that rounds to fewer permits.
pub(crate) const SHRINK_ABOVE: f64 = 1.1;
/// A window's average below this many times the baseline, with the bulkhead full: the
/// slow start doubles the limit; after it, a probe may try more permits.
pub(crate) const GROW_BELOW: f64 = 1.3;
/// A success above this many times the baseline during a probe: a call queued at the
/// upstream (one that waited a whole service time is at about twice the baseline), so
/// the probe's permits go back at once.
pub(crate) const PROBE_ABOVE: f64 = 1.5;
/// How long a probe is judged after its permits are taken back: a call admitted
/// under them that queued behind one service time has ended by then.
pub(crate) const PROBE_JUDGED: f64 = 2.2;
/// The successes the next probe waits for after the first failed one; each failed
/// probe doubles it, up to [`PROBE_EVERY`].
pub(crate) const PROBE_BACKOFF: u32 = 20;
/// The most successes between two failed probes: a settled limit delays one call a
/// probe, under one in a hundred, at any rate (5 s at 20 calls a second).
pub(crate) const PROBE_EVERY: u32 = 100;
/// The longest wait between two probes however few the successes: the capacity that
/// comes back is found within it (and the ramp after) on a slow upstream too.
pub(crate) const PROBE_WAIT: Duration = Duration::from_secs(8);
/// A single success above this many times the baseline ends its window at once: the
/// latency jumped (the upstream's capacity dropped), and the cut comes before the
/// calls admitted meanwhile queue behind the old limit.
pub(crate) const JUMP_ABOVE: f64 = 2.2;
/// The fewest successes a window averages.
pub(crate) const MIN_SAMPLES: u32 = 10;
/// The periods of the baseline's memory.
pub(crate) const PERIODS: usize = 10;
/// The shortest period; each is drawn up to twice this.
pub(crate) const PERIOD: Duration = Duration::from_secs(120);

/// One change of the limit: `from` → `to`, at `ratio` × the `baseline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) ratio: f64,
    pub(crate) baseline: Duration,
}

impl Change {
    /// A change of more than one permit, which an event tells.
    pub(crate) fn is_jump(&self) -> bool {
        self.from.abs_diff(self.to) > 1
    }

    /// The change in words: `sber's limit 8 → 4: latency 2.1× its baseline of 40 ms`.
    #[cfg(any(feature = "tracing", test))]
    pub(crate) fn describe(&self, system: &str) -> String {
        format!(
            "{system}'s limit {} → {}: latency {:.1}× its baseline of {} ms",
            self.from,
            self.to,
            self.ratio,
            self.baseline.as_millis()
        )
    }
}

/// One system's adaptive limit.
#[derive(Debug)]
pub(crate) struct Limiter {
    /// The limit, for readers; 0 while the bulkhead is fixed (then nothing is sampled).
    shown: AtomicUsize,
    /// The bulkhead's permits in the settings: the limit's ceiling.
    ceiling: AtomicUsize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    adaptive: bool,
    /// Starting: the limit doubles (rather than grows by one) while latency stays low.
    starting: bool,
    ceiling: usize,
    floor: usize,
    limit: usize,
    /// Calls that started before this are not sampled: admitted before the last cut.
    since: Option<Instant>,
    sum: Duration,
    count: u32,
    /// Some call of the window ended with the limit's worth in flight.
    full: bool,
    baseline: Baseline,
    rng: fastrand::Rng,
    /// The probe under way: `limit` is the permits it tries.
    probe: Option<Probe>,
    /// The permits the next probe tries: 1, doubled by each probe kept.
    step: usize,
    /// The successes the next failed probe makes the one after it wait for:
    /// [`PROBE_BACKOFF`], doubled by each failed probe up to [`PROBE_EVERY`].
    backoff: u32,
    /// After a failed probe: the successes the next probe still waits for, and when it
    /// may start with fewer ([`PROBE_WAIT`] after the failure).
    next_probe: Option<(u32, Instant)>,
}

/// A probe: more permits tried over a limit whose windows show no queueing.
#[derive(Debug, Clone, Copy)]
struct Probe {
    /// The limit it started from, which it goes back to if a call queues.
    from: usize,
    /// When it started: calls admitted since are admitted under its permits.
    at: Instant,
    /// When its permits were taken back (the bulkhead sized to `from` again, so that
    /// no more calls are admitted under them than its first turn): when the first
    /// call admitted under them ended.
    held: Option<Instant>,
}

/// The lowest window average of each of the last periods.
#[derive(Debug, Default)]
struct Baseline {
    past: [Option<Duration>; PERIODS],
    next: usize,
    current: Option<Duration>,
    ends: Option<Instant>,
}

impl Baseline {
    /// The baseline: the lowest window average remembered, if any.
    fn value(&self) -> Option<Duration> {
        self.past
            .iter()
            .chain([&self.current])
            .flatten()
            .min()
            .copied()
    }

    /// A window averaged `average`, ending `now`.
    fn offer(&mut self, average: Duration, now: Instant, rng: &mut fastrand::Rng) {
        let ends = *self.ends.get_or_insert_with(|| now + jittered(rng));
        if now >= ends {
            self.past[self.next] = self.current.take();
            self.next = (self.next + 1) % PERIODS;
            self.ends = Some(now + jittered(rng));
        }
        self.current = Some(self.current.map_or(average, |low| low.min(average)));
    }
}

/// A period's length: from [`PERIOD`] to twice it.
fn jittered(rng: &mut fastrand::Rng) -> Duration {
    PERIOD + PERIOD.mul_f64(rng.f64())
}

impl Limiter {
    /// The limit a replica of `settings`' system starts at: a fixed bulkhead's permits;
    /// an adaptive one's quarter of them, rounded up, at least its floor (see [`new`](Self::new)).
    pub(crate) fn first_limit(settings: &SystemSettings) -> usize {
        let ceiling = settings.bulkhead_permits();
        if !settings.bulkhead_adaptive() {
            return ceiling;
        }
        let floor = (settings.bulkhead_floor() as usize).min(ceiling);
        ceiling.div_ceil(4).max(floor)
    }

    /// The limit of `settings`' system as a replica starts: at a quarter of its
    /// ceiling (rounded up, at least its floor), where the first windows measure the
    /// upstream's latency with few calls in flight (the baseline), then doubling each
    /// window whose latency stays low, up to the ceiling, until latency rises (a slow
    /// start).
    pub(crate) fn new(settings: &SystemSettings) -> Self {
        let ceiling = settings.bulkhead_permits();
        let adaptive = settings.bulkhead_adaptive();
        let floor = (settings.bulkhead_floor() as usize).min(ceiling);
        let first = Self::first_limit(settings);
        Limiter {
            shown: AtomicUsize::new(if adaptive { first } else { 0 }),
            ceiling: AtomicUsize::new(ceiling),
            state: Mutex::new(State {
                adaptive,
                starting: true,
                ceiling,
                floor,
                limit: if adaptive { first } else { ceiling },
                since: None,
                sum: Duration::ZERO,
                count: 0,
                full: false,
                baseline: Baseline::default(),
                // Random per process and system, so replicas' periods spread.
                rng: fastrand::Rng::with_seed(
                    std::collections::hash_map::RandomState::new().hash_one(settings.name()),
                ),
                probe: None,
                step: 1,
                backoff: PROBE_BACKOFF,
                next_probe: None,
            }),
        }
    }

    /// Whether successes are sampled: the bulkhead is adaptive.
    #[inline]
    pub(crate) fn sampling(&self) -> bool {
        self.shown.load(Ordering::Relaxed) != 0
    }

    /// The adaptive limit (computed in observe mode too); `None` for a fixed bulkhead.
    pub(crate) fn limit(&self) -> Option<usize> {
        Some(self.shown.load(Ordering::Acquire)).filter(|&limit| limit != 0)
    }

    /// The ceiling: the bulkhead's permits in the settings.
    pub(crate) fn ceiling(&self) -> usize {
        self.ceiling.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics under the lock; a poisoned one holds consistent figures.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A success that started at `start` ended at `end`, holding a permit of
    /// `bulkhead`; `enforce` unless the breaker observes (then the bulkhead stays at
    /// its ceiling). The limit's change, if the window it closed changed it.
    pub(crate) fn sample<B: Resize>(
        &self,
        bulkhead: &B,
        start: Instant,
        end: Instant,
        enforce: bool,
    ) -> Option<Change> {
        let mut state = self.lock();
        if !state.adaptive || state.since.is_some_and(|since| start < since) {
            return None;
        }
        let latency = end.saturating_duration_since(start);
        if let Some((calls, _)) = &mut state.next_probe {
            *calls = calls.saturating_sub(1);
        }
        state.sum += latency;
        state.count += 1;
        state.full |= bulkhead.in_use() >= state.limit;
        // A probe that ends restarts the window: no window closes on this call then.
        let judged = state.judge(start, end, latency);
        let change = if let Some(ratio) = state.jump(latency) {
            state.restart_window();
            match (judged, state.moved(ratio, false, end)) {
                (Some(failed), Some(cut)) => Some(Change {
                    from: failed.from,
                    ..cut
                }),
                (judged, cut) => cut.or(judged),
            }
        } else if state.count >= MIN_SAMPLES.max(state.limit as u32) {
            state.close_window(end)
        } else {
            judged
        };
        if let Some(change) = change {
            self.shown.store(change.to, Ordering::Release);
        }
        state.enforce(bulkhead, enforce);
        change
    }

    /// Sizes `bulkhead` to the limit (to the ceiling unless `enforce`): as the guard is
    /// built, whose bulkhead starts at its permits.
    pub(crate) fn size<B: Resize>(&self, bulkhead: &B, enforce: bool) {
        self.lock().enforce(bulkhead, enforce);
    }

    /// Sets the limit to `to` and sizes `bulkhead` to it: a window's end, driven by
    /// the loom models, which cannot afford a window's worth of samples.
    #[cfg(all(test, outbound_guard_loom))]
    pub(crate) fn set<B: Resize>(&self, bulkhead: &B, to: usize) {
        let mut state = self.lock();
        state.probe = None;
        state.limit = to.clamp(state.floor, state.ceiling);
        self.shown.store(state.limit, Ordering::Release);
        state.enforce(bulkhead, true);
    }

    /// A reload's settings: the ceiling and floor they give, the mode; an adaptive
    /// limit kept where the new ceiling and floor allow, the ceiling when the bulkhead
    /// turns adaptive (the limit in force, kept) or fixed. The baseline is kept.
    pub(crate) fn reconfigure<B: Resize>(
        &self,
        bulkhead: &B,
        settings: &SystemSettings,
        enforce: bool,
    ) {
        let mut state = self.lock();
        let was_adaptive = state.adaptive;
        state.adaptive = settings.bulkhead_adaptive();
        state.ceiling = settings.bulkhead_permits();
        state.floor = (settings.bulkhead_floor() as usize).min(state.ceiling);
        // A probe under way ends: its limit before it is the one kept.
        let settled = state.probe.take().map_or(state.limit, |probe| probe.from);
        state.limit = if state.adaptive && was_adaptive {
            settled.clamp(state.floor, state.ceiling)
        } else {
            state.starting = false;
            state.ceiling
        };
        state.restart_window();
        self.ceiling.store(state.ceiling, Ordering::Release);
        self.shown.store(
            if state.adaptive { state.limit } else { 0 },
            Ordering::Release,
        );
        state.enforce(bulkhead, enforce);
    }
}

impl State {
    fn restart_window(&mut self) {
        self.sum = Duration::ZERO;
        self.count = 0;
        self.full = false;
    }

    /// The ratio of a success of `latency` to the baseline, if it is a jump (above
    /// [`JUMP_ABOVE`] × the baseline).
    fn jump(&self, latency: Duration) -> Option<f64> {
        let baseline = self.baseline.value()?.max(Duration::from_nanos(1));
        let ratio = latency.as_secs_f64() / baseline.as_secs_f64();
        (ratio > JUMP_ABOVE).then_some(ratio)
    }

    /// Ends the window at `end`: the baseline offered its average, the limit moved.
    fn close_window(&mut self, end: Instant) -> Option<Change> {
        let (average, full) = (self.sum / self.count, self.full);
        self.restart_window();
        self.baseline.offer(average, end, &mut self.rng);
        let baseline = self.baseline.value()?.max(Duration::from_nanos(1));
        self.moved(average.as_secs_f64() / baseline.as_secs_f64(), full, end)
    }

    /// Moves the limit for a window at `ratio` × the baseline, ended at `end`, during
    /// which the bulkhead was `full` or not.
    fn moved(&mut self, ratio: f64, full: bool, end: Instant) -> Option<Change> {
        let baseline = self.baseline.value()?;
        let from = self.limit;
        // The limit under a probe, which a cut cuts.
        let settled = self.probe.map_or(from, |probe| probe.from);
        // `limit / ratio`, rounded up but for a twentieth of a permit (the ratio of
        // `workers + 1` in flight on `workers` gives `workers`, however the division
        // rounds); a ratio past any limit gives 1.
        let served = ((settled as f64 / ratio) - 0.05).ceil().max(1.0) as usize;
        let to = if ratio > SHRINK_ABOVE && served < settled {
            // The upstream serves fewer: a probe under way ends, and the next tries
            // one permit.
            self.probe = None;
            self.step = 1;
            served.max(self.floor)
        } else if ratio < GROW_BELOW && full && self.starting {
            (from * 2).min(self.ceiling)
        } else if ratio < GROW_BELOW && full && self.may_probe(end) {
            self.probe = Some(Probe {
                from,
                at: end,
                held: None,
            });
            (from + self.step).min(self.ceiling)
        } else {
            from
        };
        // The slow start ends at the ceiling or at the first sign of queueing.
        self.starting &= ratio < GROW_BELOW && from <= to && to < self.ceiling;
        if to == from {
            return None;
        }
        if to < from {
            self.since = Some(end);
        }
        self.limit = to;
        Some(Change {
            from,
            to,
            ratio,
            baseline,
        })
    }

    /// Whether a probe may start at `now`: none is under way, the limit is below the
    /// ceiling, and the last failed probe's back-off is over.
    fn may_probe(&self, now: Instant) -> bool {
        self.probe.is_none()
            && self.limit < self.ceiling
            && (self.next_probe).is_none_or(|(calls, wait)| calls == 0 || now >= wait)
    }

    /// A success of `latency` that started at `start` and ended at `end`, judged
    /// against the probe under way, if any: the limit's change if the probe failed. A
    /// success above [`PROBE_ABOVE`] × the baseline queued: the probe's permits go back
    /// at once, and the next probe waits the back-off, which doubles.
    /// The first call admitted under the probe that ends takes its permits back (the
    /// bulkhead is sized to the limit before it, so that a turn of the upstream's
    /// workers at most is admitted under them); when a success ends
    /// [`PROBE_JUDGED`] × the baseline after that with none queued, the probe is kept,
    /// and the next one tries twice the permits, at the next window without queueing.
    fn judge(&mut self, start: Instant, end: Instant, latency: Duration) -> Option<Change> {
        let probe = self.probe?;
        let baseline = self.baseline.value()?.max(Duration::from_nanos(1));
        let ratio = latency.as_secs_f64() / baseline.as_secs_f64();
        if ratio > PROBE_ABOVE {
            let from = self.limit;
            self.probe = None;
            self.limit = probe.from;
            self.since = Some(end);
            self.restart_window();
            self.step = 1;
            self.next_probe = Some((self.backoff, end + PROBE_WAIT));
            self.backoff = (self.backoff * 2).min(PROBE_EVERY);
            return Some(Change {
                from,
                to: probe.from,
                ratio,
                baseline,
            });
        }
        match probe.held {
            None if start >= probe.at => {
                self.probe = Some(Probe {
                    held: Some(end),
                    ..probe
                });
            }
            Some(held) if end >= held + baseline.mul_f64(PROBE_JUDGED) => {
                self.probe = None;
                self.restart_window();
                self.step *= 2;
                self.backoff = PROBE_BACKOFF;
                self.next_probe = None;
            }
            _ => {}
        }
        None
    }

    /// Sizes `bulkhead` to the limit (the limit before a probe once the probe's
    /// permits are taken back), or to the ceiling unless `enforce`.
    fn enforce<B: Resize>(&self, bulkhead: &B, enforce: bool) {
        let size = if self.adaptive && enforce {
            match self.probe {
                Some(Probe {
                    from,
                    held: Some(_),
                    ..
                }) => from,
                _ => self.limit,
            }
        } else {
            self.ceiling
        };
        if bulkhead.size() != size {
            bulkhead.resize(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Baseline, Change, Limiter, Resize, PERIOD, PERIODS};
    use outbound_guard_settings::Settings;
    use std::cell::Cell;
    use std::time::Duration;
    use tokio::time::Instant;

    /// A bulkhead that only counts: its permits held and its size.
    #[derive(Default)]
    struct Counted {
        in_use: Cell<usize>,
        size: Cell<usize>,
    }

    impl Resize for Counted {
        fn in_use(&self) -> usize {
            self.in_use.get()
        }
        fn size(&self) -> usize {
            self.size.get()
        }
        fn resize(&self, size: usize) {
            self.size.set(size);
        }
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// The guide's 8 permits, adaptive, its successes fed by hand from `t0`.
    struct Fed {
        limiter: Limiter,
        bulkhead: Counted,
        t0: Instant,
    }

    impl Fed {
        fn new() -> Self {
            Self::with("")
        }

        fn with(toml: &str) -> Self {
            let settings = Settings::parse(
                &format!("[systems.sber]\nbulkhead = \"adaptive\"\n{toml}"),
                "test",
            )
            .unwrap();
            let limiter = Limiter::new(settings.system("sber").unwrap());
            let bulkhead = Counted::default();
            limiter.size(&bulkhead, true);
            Fed {
                limiter,
                bulkhead,
                t0: Instant::now(),
            }
        }

        /// A success admitted at `start` ms that took `took` ms, with the bulkhead full.
        fn ok(&self, start: u64, took: u64) -> Option<Change> {
            self.ok_exactly(start, MS(took))
        }

        fn ok_exactly(&self, start: u64, took: Duration) -> Option<Change> {
            let start = self.t0 + MS(start);
            self.bulkhead.in_use.set(self.bulkhead.size.get());
            (self.limiter).sample(&self.bulkhead, start, start + took, true)
        }

        /// A window of successes of `took` ms ending at `end` ms (ten, or the
        /// bulkhead's size if more): its change.
        fn window(&self, end: u64, took: u64) -> Option<Change> {
            let calls = self.bulkhead.size.get().max(10);
            (0..calls)
                .map(|_| self.ok(end - took, took))
                .last()
                .flatten()
        }

        fn limit(&self) -> (usize, usize) {
            (self.limiter.limit().unwrap(), self.bulkhead.size.get())
        }
    }

    /// Started at 2, doubled to 4 at 100 ms a call, cut to 2 by a window at twice that
    /// ending at 1 s, and a probe of 3 failed at 1.6 s: settled at 2 with a baseline of
    /// 100 ms, the next probe at the next window (20 successes after the failure).
    fn settled() -> Fed {
        let fed = Fed::new();
        assert_eq!(fed.window(500, 100).map(|c| c.to), Some(4));
        assert_eq!(fed.window(1_000, 200).map(|c| c.to), Some(2));
        assert_eq!(fed.limit(), (2, 2));
        assert_eq!(fed.window(1_400, 100).map(|c| c.to), Some(3));
        assert_eq!(fed.ok(1_400, 200).map(|c| c.to), Some(2));
        assert_eq!(fed.window(1_700, 100), None, "10 successes of 20");
        assert_eq!(fed.limit(), (2, 2));
        fed
    }

    #[test]
    fn a_probe_that_queues_goes_back_at_its_first_delayed_call_and_backs_off() {
        let fed = settled();
        // A window without queueing: one permit more, kept (below).
        let probe = fed.window(6_000, 100).unwrap();
        assert_eq!((probe.from, probe.to), (2, 3));
        assert_eq!(fed.ok(6_000, 100), None);
        assert_eq!(fed.ok(6_220, 100), None);
        assert_eq!(fed.limit(), (3, 3), "kept");
        // The next tries two permits more.
        let probe = fed.window(6_600, 100).unwrap();
        assert_eq!((probe.from, probe.to), (3, 5));
        assert_eq!(fed.limit(), (5, 5));
        // The first call admitted under it ends: its permits are taken back.
        assert_eq!(fed.ok(6_600, 100), None);
        assert_eq!(fed.limit(), (5, 3));
        // One of them waited a whole service time: back to 3 at once.
        let back = fed.ok(6_600, 200).unwrap();
        assert_eq!((back.from, back.to), (5, 3));
        assert!((back.ratio - 2.0).abs() < 1e-9, "{back:?}");
        assert_eq!(fed.limit(), (3, 3));
        // The next probe waits for 20 successes, and tries one permit: not at a clean
        // window of 10 calls, at the next.
        assert_eq!(fed.window(6_900, 100), None);
        assert_eq!(fed.limit(), (3, 3));
        let again = fed.window(7_000, 100).unwrap();
        assert_eq!((again.from, again.to), (3, 4));
        // It fails too, before its permit is taken back; the next waits for 40.
        assert_eq!(fed.ok(7_000, 151).map(|c| c.to), Some(3));
        // (The calls admitted before it failed, at 7.151 s, are not counted.)
        for end in [7_200, 7_300, 7_400, 7_500] {
            assert_eq!(fed.window(end, 100), None, "{end}");
        }
        assert_eq!(fed.window(7_600, 100).map(|c| c.to), Some(4));
        // Fewer successes: at 8 s after the failure at the latest.
        assert_eq!(fed.ok(7_600, 151).map(|c| c.to), Some(3));
        assert_eq!(fed.window(15_750, 100), None);
        assert_eq!(fed.window(15_751, 100).map(|c| c.to), Some(4));
    }

    #[test]
    fn a_probe_without_queueing_is_kept_after_its_calls_had_time_to_queue() {
        let fed = settled();
        assert_eq!(fed.window(6_200, 100).map(|c| c.to), Some(3));
        // Calls admitted before the probe ending say nothing of it.
        assert_eq!(fed.ok(6_150, 100), None);
        assert_eq!(fed.limit(), (3, 3));
        // Its first call ends at 6.3 s: the permit taken back, judged until 6.52 s.
        assert_eq!(fed.ok(6_200, 100), None);
        assert_eq!(fed.limit(), (3, 2));
        assert_eq!(fed.ok(6_419, 100), None);
        assert_eq!(fed.limit(), (3, 2));
        assert_eq!(fed.ok(6_420, 100), None);
        assert_eq!(fed.limit(), (3, 3), "kept");
        // The next window without queueing probes again at once.
        assert_eq!(fed.window(6_700, 100).map(|c| c.to), Some(5));
    }

    #[test]
    fn a_window_that_queues_under_a_probe_cuts_from_the_limit_before_it() {
        let fed = settled();
        assert_eq!(fed.window(6_200, 100).map(|c| c.to), Some(3));
        // Successes under 1.5x, averaging 1.4x: the limit before the probe, 2, over 1.4
        // is 1.43, rounded up to 2: no cut.
        assert_eq!(fed.window(6_300, 140), None);
        assert_eq!(fed.limit(), (3, 3));
        // A jump during the probe: cut from 2 (2 / 2.5 → 1), and the probe is over.
        let cut = fed.ok(6_100, 250).unwrap();
        assert_eq!((cut.from, cut.to), (3, 1));
        assert_eq!(fed.limit(), (1, 1));
        // A reload during a probe keeps the limit before it.
        let fed = settled();
        assert_eq!(fed.window(6_200, 100).map(|c| c.to), Some(3));
        let settings =
            Settings::parse("[systems.sber]\nbulkhead = \"adaptive\"\n", "test").unwrap();
        (fed.limiter).reconfigure(&fed.bulkhead, settings.system("sber").unwrap(), true);
        assert_eq!(fed.limit(), (2, 2));
    }

    #[test]
    fn the_slow_start_ends_at_the_ceiling_so_a_wider_one_is_probed_for() {
        let fed = Fed::new();
        assert_eq!(fed.window(500, 100).map(|c| c.to), Some(4));
        assert_eq!(fed.window(1_000, 100).map(|c| c.to), Some(8));
        assert_eq!(fed.window(1_500, 100), None, "at the ceiling");
        // A reload to a ceiling of 16: one permit more at a time, not twice the limit.
        let settings = Settings::parse(
            "[systems.sber]\nbulkhead = \"adaptive\"\nmax_connections = 20\n",
            "test",
        )
        .unwrap();
        (fed.limiter).reconfigure(&fed.bulkhead, settings.system("sber").unwrap(), true);
        assert_eq!(fed.limit(), (8, 8));
        assert_eq!(fed.window(2_000, 100).map(|c| c.to), Some(9));
    }

    #[test]
    fn workers_and_one_in_flight_come_back_to_the_workers() {
        // The slow start to the ceiling (8, or 16) at 100 ms a call, then a window at
        // `took`: 8 in flight on 7 workers average 8/7 of the baseline and come back to
        // 7, however the division rounds; a slower window within a permit's rounding
        // (8 / 1.12 is 7.14) moves nothing, and neither does one within 1.1x of the
        // baseline, though 16 / 1.09 rounds up to 15.
        let nanos = Duration::from_nanos;
        for (limit, took, to) in [
            (8, nanos(800_000_000 / 7), Some(7)),
            (8, MS(112), None),
            (16, MS(109), None),
            (16, MS(111), Some(15)),
        ] {
            let fed = Fed::with(&format!("max_connections = {}", limit * 5 / 4));
            let mut end = 0;
            while fed.limit().0 < limit {
                end += 500;
                fed.window(end, 100);
            }
            assert_eq!(fed.limit(), (limit, limit));
            let window = (0..limit.max(10)).map(|_| fed.ok_exactly(end, took)).last();
            assert_eq!(window.flatten().map(|c| c.to), to, "{took:?} on {limit}");
            // The slow start is over at a cut: a window without queueing probes.
            if let Some(to) = to {
                let probe = fed.window(end + 500, 100).map(|c| c.to);
                assert_eq!(probe, Some(to + 1));
            }
        }
    }

    #[test]
    fn each_of_the_baselines_periods_lasts_two_to_four_minutes() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut baseline = Baseline::default();
        let t0 = Instant::now();
        let mut turned = vec![t0];
        // A window a second for an hour, each slower than the one before.
        for s in 0..3600 {
            let next = baseline.next;
            baseline.offer(
                Duration::from_millis(100 + s),
                t0 + Duration::from_secs(s),
                &mut rng,
            );
            if baseline.next != next {
                turned.push(t0 + Duration::from_secs(s));
            }
        }
        let lengths: Vec<Duration> = turned.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(lengths.len() >= 14, "{lengths:?}");
        for length in &lengths {
            assert!(
                (PERIOD..=2 * PERIOD + Duration::from_secs(1)).contains(length),
                "{lengths:?}"
            );
        }
        // The memory: the lowest window of the current period and of the last
        // `PERIODS` before it, the oldest of which began at `oldest`; the first
        // window's 100 ms long forgotten.
        let oldest = turned[turned.len() - PERIODS - 1];
        let kept = baseline.value().unwrap();
        assert_eq!(kept, Duration::from_millis(100 + (oldest - t0).as_secs()));
    }
}
