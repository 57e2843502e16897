//! How long an open breaker stays open: the open period's arithmetic, apart from the
//! lock and the state machine that decide *when* a breaker opens ([`state`](super::state)).
//!
//! An opening lasts `cb_open_duration`, multiplied by `cb_open_backoff` for each
//! re-opening after a failed trial since the breaker last closed, plus a random share of
//! up to `cb_open_jitter` of it, then at least until an upstream's retry hint
//! (`Retry-After`, `grpc-retry-pushback-ms`) kept since the state began; never more than
//! `cb_open_max`. A hint that lands while the breaker is already open lengthens the
//! running period up to the same cap ([`lengthened`]).
//!
//! The jitter's numbers come from [`fastrand`]'s seedable generator: a seed gives the same
//! periods ([`OpenPeriods::seed`]), and a period without jitter draws no number, so
//! turning jitter on by a reload continues the seeded sequence where it was.

/// The open periods' parameters, from a system's settings; nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Periods {
    /// `cb_open_duration`: an opening's length before backoff and jitter.
    pub open_nanos: u64,
    /// `cb_open_max`: the longest open period, the cap of backoff, jitter and hints.
    pub open_max_nanos: u64,
    /// `cb_open_backoff`: each re-opening after a failed trial multiplies the breaker's
    /// own period by this.
    pub backoff: f64,
    /// `cb_open_jitter`: a share of the period, up to this, is added at random.
    pub jitter: f64,
}

/// An open period: its length and what decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Opening {
    /// From the opening to the trials.
    pub nanos: u64,
    /// The upstream's retry hint, when it made the period longer than the breaker's own.
    pub hint_nanos: Option<u64>,
    /// Whether the breaker's own period was multiplied by `cb_open_backoff`.
    pub backed_off: bool,
}

/// What one breaker remembers between openings to decide the next one's length.
#[derive(Debug)]
pub(crate) struct OpenPeriods {
    /// The breaker's own period before jitter at the last opening, 0 once closed: the
    /// base a re-opening multiplies by `backoff`.
    base_nanos: u64,
    /// The latest instant an upstream's retry hint asked not to be called before, kept
    /// in the current state for an opening from it.
    hint_until: Option<u64>,
    /// The jitter's generator: seedable, so runs are reproducible.
    rng: fastrand::Rng,
}

impl OpenPeriods {
    /// No opening yet, no hint, the generator seeded with 0.
    pub(crate) fn new() -> Self {
        OpenPeriods {
            base_nanos: 0,
            hint_until: None,
            rng: fastrand::Rng::with_seed(0),
        }
    }

    /// Seeds the jitter's generator: the same seed gives the same open periods.
    pub(crate) fn seed(&mut self, seed: u64) {
        self.rng = fastrand::Rng::with_seed(seed);
    }

    /// Keeps a retry hint that asks for no call before `until`, for an opening in the
    /// current state: the latest of the hints kept wins.
    pub(crate) fn keep_hint(&mut self, until: u64) {
        self.hint_until = Some(self.hint_until.map_or(until, |kept| kept.max(until)));
    }

    /// The hint an opening from the current state honours: `until`, or none, replacing
    /// any kept (a failed trial's own hint, or its lack of one, decides).
    pub(crate) fn set_hint(&mut self, until: Option<u64>) {
        self.hint_until = until;
    }

    /// The breaker entered a new state: a kept hint belonged to the last one; closing
    /// also ends the backoff, so the next opening is `open_nanos` again.
    pub(crate) fn new_state(&mut self, closed: bool) {
        self.hint_until = None;
        if closed {
            self.base_nanos = 0;
        }
    }

    /// The length of an opening at `now`: `open_nanos`, multiplied by `backoff` when it
    /// follows a failed trial, plus up to `jitter` of it at random, then at least until
    /// the kept hint (which it uses up); never more than `open_max_nanos`.
    pub(crate) fn open(
        &mut self,
        periods: &Periods,
        after_failed_trial: bool,
        now: u64,
    ) -> Opening {
        let max = periods.open_max_nanos.max(periods.open_nanos);
        let backed_off = after_failed_trial && self.base_nanos > 0 && periods.backoff > 1.0;
        let base = if backed_off {
            scale(self.base_nanos, periods.backoff).min(max)
        } else {
            periods.open_nanos
        };
        self.base_nanos = base;
        let mut nanos = base;
        if periods.jitter > 0.0 {
            let share = periods.jitter * self.rng.f64();
            nanos = base.saturating_add(scale(base, share)).min(max);
        }
        let mut hint_nanos = None;
        if let Some(until) = self.hint_until.take() {
            let hinted = until.saturating_sub(now).min(max);
            if hinted > nanos {
                nanos = hinted;
                hint_nanos = Some(hinted);
            }
        }
        Opening {
            nanos,
            hint_nanos,
            backed_off: backed_off && base > periods.open_nanos,
        }
    }
}

/// A running open period that began at `since` and ends at `ends`, asked by a retry hint
/// to last until `until`: its new end, if that is later, never past `open_max_nanos`
/// from `since`; `None` when the period stays as it is.
pub(crate) fn lengthened(open_max_nanos: u64, since: u64, ends: u64, until: u64) -> Option<u64> {
    let wanted = until.min(since.saturating_add(open_max_nanos));
    (wanted > ends).then_some(wanted)
}

/// `nanos × factor`, saturating (`factor` ≥ 0).
fn scale(nanos: u64, factor: f64) -> u64 {
    let scaled = nanos as f64 * factor;
    if scaled >= u64::MAX as f64 {
        u64::MAX
    } else {
        scaled as u64
    }
}

#[cfg(test)]
mod tests {
    use super::{lengthened, scale, OpenPeriods, Periods};

    /// The shortest and the longest of the breaker's own open periods, without a retry
    /// hint (nanoseconds): at least `open_nanos` (backoff and jitter only lengthen it);
    /// at most `open_max_nanos`, and without a backoff, at most `open_nanos` with its
    /// whole jitter. [`OpenPeriods::open`] never leaves it.
    fn own_range(p: &Periods) -> (u64, u64) {
        let max = p.open_max_nanos.max(p.open_nanos);
        let longest = if p.backoff > 1.0 {
            max
        } else {
            p.open_nanos
                .saturating_add(scale(p.open_nanos, p.jitter))
                .min(max)
        };
        (p.open_nanos, longest)
    }

    const fn periods(open_nanos: u64, open_max_nanos: u64, backoff: f64, jitter: f64) -> Periods {
        Periods {
            open_nanos,
            open_max_nanos,
            backoff,
            jitter,
        }
    }

    const PLAIN: Periods = periods(100, 1_000, 1.0, 0.0);
    const BACKOFF: Periods = periods(100, 1_000, 2.0, 0.0);

    #[test]
    fn every_opening_without_a_hint_lies_in_the_own_range() {
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..500 {
            let p = periods(
                1 + rng.u64(..1_000),
                rng.u64(..5_000),
                [1.0, 1.5, 3.0][rng.usize(..3)],
                [0.0, 0.3, 0.9][rng.usize(..3)],
            );
            let (shortest, longest) = own_range(&p);
            let mut open = OpenPeriods::new();
            open.seed(rng.u64(..));
            for i in 0..20 {
                let nanos = open.open(&p, i % 4 != 0, 0).nanos;
                assert!((shortest..=longest).contains(&nanos), "{p:?}: {nanos}");
                if i % 7 == 6 {
                    open.new_state(true);
                }
            }
        }
        // Without a backoff, the longest is the jitter's whole share, and it is reached.
        assert_eq!(own_range(&periods(100, 1_000, 1.0, 0.5)), (100, 150));
        assert_eq!(own_range(&periods(100, 120, 1.0, 0.5)), (100, 120));
        assert_eq!(own_range(&periods(100, 1_000, 2.0, 0.0)), (100, 1_000));
    }

    #[test]
    fn a_first_opening_lasts_the_open_duration() {
        let mut open = OpenPeriods::new();
        let opening = open.open(&PLAIN, false, 0);
        assert_eq!(
            (opening.nanos, opening.hint_nanos, opening.backed_off),
            (100, None, false)
        );
    }

    #[test]
    fn each_failed_trial_multiplies_by_the_backoff_up_to_the_cap() {
        let mut open = OpenPeriods::new();
        let lengths: Vec<(u64, bool)> = (0..6)
            .map(|i| {
                let opening = open.open(&BACKOFF, i > 0, 0);
                (opening.nanos, opening.backed_off)
            })
            .collect();
        assert_eq!(
            lengths,
            [
                (100, false),
                (200, true),
                (400, true),
                (800, true),
                (1_000, true),
                (1_000, true)
            ]
        );
    }

    #[test]
    fn a_failed_trial_with_no_opening_before_it_lasts_the_open_duration() {
        // No base to multiply (none yet, or the breaker closed since): the breaker's own
        // period, not a backed-off 0.
        let mut open = OpenPeriods::new();
        let opening = open.open(&BACKOFF, true, 0);
        assert_eq!((opening.nanos, opening.backed_off), (100, false));
    }

    #[test]
    fn an_opening_not_after_a_failed_trial_starts_again_from_the_open_duration() {
        let mut open = OpenPeriods::new();
        open.open(&BACKOFF, false, 0);
        assert_eq!(open.open(&BACKOFF, true, 0).nanos, 200);
        // Opened on the failure rate (a reset, then the closed window): no backoff.
        assert_eq!(open.open(&BACKOFF, false, 0).nanos, 100);
    }

    #[test]
    fn closing_ends_the_backoff_and_other_states_keep_it() {
        let mut open = OpenPeriods::new();
        open.open(&BACKOFF, false, 0);
        open.new_state(false); // into open, then half-open
        assert_eq!(open.open(&BACKOFF, true, 0).nanos, 200);
        open.new_state(true); // closed
        let opening = open.open(&BACKOFF, true, 0);
        assert_eq!((opening.nanos, opening.backed_off), (100, false));
    }

    #[test]
    fn a_backoff_of_one_or_less_never_backs_off() {
        for backoff in [1.0, 0.5] {
            let mut open = OpenPeriods::new();
            open.open(&periods(100, 1_000, backoff, 0.0), false, 0);
            let opening = open.open(&periods(100, 1_000, backoff, 0.0), true, 0);
            assert_eq!(
                (opening.nanos, opening.backed_off),
                (100, false),
                "{backoff}"
            );
        }
    }

    #[test]
    fn a_backoff_capped_at_the_open_duration_is_not_backed_off() {
        // `cb_open_max` below the doubled period: the cap is `open_nanos` itself.
        let capped = periods(100, 100, 2.0, 0.0);
        let mut open = OpenPeriods::new();
        open.open(&capped, false, 0);
        let opening = open.open(&capped, true, 0);
        assert_eq!((opening.nanos, opening.backed_off), (100, false));
    }

    #[test]
    fn a_hint_longer_than_the_period_decides_it_up_to_the_cap() {
        let mut open = OpenPeriods::new();
        open.keep_hint(500);
        let opening = open.open(&PLAIN, false, 100);
        assert_eq!((opening.nanos, opening.hint_nanos), (400, Some(400)));
        // Used up: the next opening has none.
        assert_eq!(open.open(&PLAIN, false, 100).hint_nanos, None);
        open.keep_hint(5_000);
        let opening = open.open(&PLAIN, false, 0);
        assert_eq!((opening.nanos, opening.hint_nanos), (1_000, Some(1_000)));
    }

    #[test]
    fn a_hint_shorter_than_the_period_or_past_is_not_the_periods() {
        let mut open = OpenPeriods::new();
        open.keep_hint(150);
        let opening = open.open(&PLAIN, false, 100);
        assert_eq!((opening.nanos, opening.hint_nanos), (100, None));
        open.keep_hint(50);
        assert_eq!(open.open(&PLAIN, false, 100).nanos, 100);
        // Exactly the period: the breaker's own, not the hint's.
        open.keep_hint(200);
        assert_eq!(open.open(&PLAIN, false, 100).hint_nanos, None);
    }

    #[test]
    fn the_latest_kept_hint_wins_and_a_set_one_replaces_them() {
        let mut open = OpenPeriods::new();
        open.keep_hint(300);
        open.keep_hint(200);
        assert_eq!(open.open(&PLAIN, false, 0).nanos, 300);
        open.keep_hint(300);
        open.set_hint(Some(250));
        assert_eq!(open.open(&PLAIN, false, 0).nanos, 250);
        open.keep_hint(300);
        open.set_hint(None);
        assert_eq!(open.open(&PLAIN, false, 0).nanos, 100);
        open.keep_hint(300);
        open.new_state(false);
        assert_eq!(
            open.open(&PLAIN, false, 0).nanos,
            100,
            "a new state forgets it"
        );
    }

    #[test]
    fn jitter_adds_up_to_its_share_and_a_seed_repeats_it() {
        let jittered = periods(1_000, 10_000, 1.0, 0.5);
        let draw = |seed: u64| {
            let mut open = OpenPeriods::new();
            open.seed(seed);
            (0..50)
                .map(|_| open.open(&jittered, false, 0).nanos)
                .collect::<Vec<_>>()
        };
        let first = draw(7);
        assert!(
            first.iter().all(|n| (1_000..1_500).contains(n)),
            "{first:?}"
        );
        assert_eq!(first, draw(7), "the same seed, the same periods");
        assert_ne!(first, draw(8), "another seed, other periods");
        let (low, high) = (first.iter().min().unwrap(), first.iter().max().unwrap());
        assert!(high - low > 250, "spread over the share: {first:?}");
    }

    #[test]
    fn jitter_is_drawn_from_fastrands_generator() {
        // The seeded breaker draws as any `fastrand::Rng` with the same seed would: a
        // user reproducing a run needs the seed alone.
        let mut open = OpenPeriods::new();
        open.seed(42);
        let mut reference = fastrand::Rng::with_seed(42);
        for _ in 0..3 {
            let share = 0.5 * reference.f64();
            let expected = 1_000 + scale(1_000, share);
            assert_eq!(
                open.open(&periods(1_000, 10_000, 1.0, 0.5), false, 0).nanos,
                expected
            );
        }
    }

    #[test]
    fn jitter_is_capped_and_no_jitter_draws_nothing() {
        let mut open = OpenPeriods::new();
        open.seed(3);
        for _ in 0..20 {
            assert!(open.open(&periods(1_000, 1_050, 1.0, 0.9), false, 0).nanos <= 1_050);
        }
        // Without jitter, no number is drawn: the sequence goes on where it was.
        let (mut with_pause, mut without) = (OpenPeriods::new(), OpenPeriods::new());
        with_pause.seed(9);
        without.seed(9);
        with_pause.open(&PLAIN, false, 0);
        let jittered = periods(1_000, 10_000, 1.0, 0.5);
        assert_eq!(
            with_pause.open(&jittered, false, 0),
            without.open(&jittered, false, 0)
        );
    }

    #[test]
    fn a_hint_lengthens_a_running_period_up_to_the_cap_from_its_start() {
        // Opened at 100 for 10 (ends at 110), cap 1 000 from the opening.
        assert_eq!(lengthened(1_000, 100, 110, 500), Some(500));
        assert_eq!(lengthened(1_000, 100, 110, 5_000), Some(1_100));
        assert_eq!(lengthened(1_000, 100, 110, 110), None, "ends there anyway");
        assert_eq!(lengthened(1_000, 100, 110, 105), None, "earlier");
        assert_eq!(lengthened(u64::MAX, 100, 110, u64::MAX), Some(u64::MAX));
    }

    #[test]
    fn scaling_saturates() {
        assert_eq!(scale(1_000, 1.5), 1_500);
        assert_eq!(scale(u64::MAX, 2.0), u64::MAX);
        assert_eq!(scale(1_000, 0.0), 0);
    }
}
