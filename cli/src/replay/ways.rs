//! Every way the calls without a recorded outcome could have been answered, replayed:
//! each figure of a setting as a range that holds its value under each of them.
//!
//! **The claim.** Each call the recording's guard refused is answered succeeding or
//! failing (each at the duration the evidence near its gap gives, [`guess::Options`](super::guess::Options)).
//! There are 2^k such answerings of k calls; when the ranges are *exhaustive*, each
//! figure of each of them lies within its range. A breaker's figures are not monotone
//! in those answers (a failure answered early opens the breaker sooner, so later calls
//! are refused and never seen), so two extremes (all succeeding, all failing) do not
//! bound them; the ranges come from replaying every way instead.
//!
//! **How every way is replayed without 2^k replays.** A refused call's answer changes
//! nothing the replayed breaker sees: only the answers of the calls it lets run do. So
//! a replay asks for an answer only when the replayed guard lets such a call run
//! ([`Choice::Path`]: the n-th asked fails if the path says so), and the ways are the
//! paths of those decisions: after a replay that asked d answers past its path's, each
//! of those d could have gone the other way, a path of its own (a depth-first walk of
//! the tree of decisions). Along one path the calls the replayed guard refused may have
//! any answer: a figure counting them (healthy refused, failing refused) moves one by
//! one with them, so its two ends (all of them succeeding, all failing) bound it; the
//! other figures count only calls that ran, or none of them. A setting as strict as
//! the recording's refuses the same calls and asks nothing: one replay, exact.
//!
//! Past the budget of replays ([`Budget`]), the paths walked say nothing of the others
//! ([`Proof::exhaustive`] false), and are not shown as a range: [`Bounds::possible`]
//! holds every way, proven without replaying each ([`possible`](super::possible)). A setting looser than the recording's
//! lets most of them run and has too many paths; so may a stricter one over many
//! half-open periods, each trial a decision.
//!
//! The test below checks the claim against brute force: small recordings, every one of
//! the 2^k answerings replayed, each figure inside its range.

use std::sync::Arc;
use std::time::Duration;

use outbound_guard::ManualAction;
use outbound_guard_settings::SystemSettings;

use super::engine::{replay, Choice, Replay};
use super::figures::{figures, limit, see_holes, Bounds, Figures, Incident, Proof};
use super::guess::Options;
use super::holes::Hole;
use super::possible::Proven;
use super::recording::{Call, Recorded};

/// How many replays of a setting may be spent on its ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) replays: usize,
}

/// Replayed calls that the default budget's walk spends on one setting, about.
const DEFAULT_CALLS: usize = 500_000;
/// The default budget's most replays.
const DEFAULT_MOST: usize = 1024;

impl Budget {
    /// `asked`, or as many replays as make about half a million replayed calls
    /// of `calls` (at least 2, at most 1024).
    pub(crate) fn new(asked: Option<usize>, calls: usize) -> Budget {
        Budget {
            replays: asked
                .unwrap_or_else(|| (DEFAULT_CALLS / calls.max(1)).clamp(2, DEFAULT_MOST))
                .max(1),
        }
    }
}

/// One system's recording, ready to be replayed any way.
pub(crate) struct Replayable<'a> {
    pub(crate) calls: &'a [Call],
    pub(crate) actions: &'a [(u64, ManualAction)],
    pub(crate) options: &'a Arc<[Options]>,
    pub(crate) incidents: &'a [Incident],
    pub(crate) read_limit: Option<Duration>,
}

/// A setting assessed: its estimate, and its figures' ranges.
pub(crate) struct Assessed {
    /// The replay with the estimate's answers.
    pub(crate) replay: Replay,
    pub(crate) figures: Figures,
    pub(crate) bounds: Bounds,
    /// Replays made.
    pub(crate) replays: usize,
}

impl Replayable<'_> {
    fn run(&self, settings: &SystemSettings, choice: Choice) -> Replay {
        replay(
            settings,
            self.calls,
            self.actions,
            (self.options, choice),
            self.read_limit,
        )
    }

    /// The recording, for the proof of the possible ranges.
    fn proven(&self) -> Proven<'_> {
        Proven {
            calls: self.calls,
            actions: self.actions,
            incidents: self.incidents,
            options: self.options,
        }
    }

    /// The answers of `replay`'s calls without a recorded outcome: the one asked, or,
    /// for a call it did not ask about, `fill` (failing or not), or without `fill`, the
    /// estimate's.
    fn answers(&self, replay: &Replay, fill: Option<bool>) -> Vec<(Recorded, u32)> {
        self.options
            .iter()
            .zip(&replay.asked)
            .map(|(o, asked)| {
                let fails = asked.or(fill).unwrap_or(o.estimate_fails);
                o.answer(fails)
            })
            .collect()
    }

    /// The figures of `replay` with its calls without a recorded outcome answered as
    /// [`answers`](Self::answers) says.
    fn figures(&self, replay: &Replay, fill: Option<bool>, limit: u64) -> Figures {
        figures(
            self.calls,
            replay,
            self.incidents,
            &self.answers(replay, fill),
            limit,
        )
    }

    /// Both ends of `replay`'s figures over the answers of the calls it refused.
    fn widen(&self, bounds: &mut Bounds, replay: &Replay, limit: u64) {
        for fill in [false, true] {
            bounds
                .replayed
                .widen(&self.figures(replay, Some(fill), limit));
        }
    }

    /// `settings` assessed: the estimate's replay, then every path within `budget`, or
    /// past it, samples.
    pub(crate) fn assess(&self, settings: &SystemSettings, budget: Budget) -> Assessed {
        let estimate: Vec<bool> = self.options.iter().map(|o| o.estimate_fails).collect();
        let replay = self.run(settings, Choice::Each(estimate));
        let limit = limit(settings);
        let figures = self.figures(&replay, None, limit);
        let mut bounds = Bounds::of(&figures);
        let mut replays = 1;
        if self.options.is_empty() {
            bounds.proof = Proof {
                paths: 1,
                exhaustive: true,
            };
            return Assessed {
                replay,
                figures,
                bounds,
                replays,
            };
        }
        self.widen(&mut bounds, &replay, limit);
        let mut paths = 0;
        let mut stack: Vec<Vec<bool>> = vec![Vec::new()];
        while let Some(path) = stack.pop() {
            if paths == budget.replays {
                stack.push(path);
                break;
            }
            let walked = self.run(settings, Choice::Path(path.clone()));
            paths += 1;
            replays += 1;
            self.widen(&mut bounds, &walked, limit);
            // Each decision past the path's end went the default way (succeeding): the
            // other way is a path of its own.
            for branch in path.len()..walked.decisions {
                let mut other = path.clone();
                other.resize(branch, false);
                other.push(true);
                stack.push(other);
            }
        }
        // Past the budget, the ranges of the paths walked hold no promise: the ones
        // given are proven without replaying each way (`possible`).
        let exhaustive = stack.is_empty();
        bounds.proof = Proof { paths, exhaustive };
        if !exhaustive {
            let fills = [false, true].map(|fill| self.answers(&replay, Some(fill)));
            let possible = self
                .proven()
                .bounds(settings, &replay, [&fills[0], &fills[1]]);
            bounds.possible = Some(possible);
        }
        Assessed {
            replay,
            figures,
            bounds,
            replays,
        }
    }
}

impl Replayable<'_> {
    /// `settings`' figures on each of `draws` (one answer for each call without a
    /// recorded outcome, failing or not), paired: the n-th of every setting on the same
    /// answers; the calls in `holes` left out as [`see_holes`] says. `estimate`, its
    /// replay on the estimate's answers, is reused where it let none of those calls run
    /// (its replay is then the same whatever they answer).
    pub(crate) fn drawn(
        &self,
        settings: &SystemSettings,
        estimate: &Replay,
        draws: &[Vec<bool>],
        holes: &[Hole],
    ) -> Vec<Figures> {
        let limit = limit(settings);
        draws
            .iter()
            .map(|each| {
                let answers: Vec<(Recorded, u32)> = self
                    .options
                    .iter()
                    .zip(each)
                    .map(|(o, fails)| o.answer(*fails))
                    .collect();
                let own;
                let replay = if estimate.decisions == 0 {
                    estimate
                } else {
                    own = self.run(settings, Choice::Each(each.clone()));
                    &own
                };
                let mut f = figures(self.calls, replay, self.incidents, &answers, limit);
                if !holes.is_empty() {
                    see_holes(&mut f, replay, holes);
                }
                f
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::drawn::{self, Regime};
    use crate::replay::engine::Fate;
    use crate::replay::figures::{incidents, FastFailRange, Figure, Range};
    use crate::replay::guess;
    use crate::replay::possible::Refusable;
    use outbound_guard_settings::Settings;

    /// Settings for the brute-force check: timeouts long against the recording, or
    /// short (the breaker's refusals then end within it, and the possible ranges say
    /// which calls it cannot refuse); now and then a bulkhead that fills.
    const BRUTE: Regime = Regime {
        window: (2, 4),
        rates: &[0.3, 0.5, 0.7],
        open_ms: (100, 300, 100),
        open_max_times: &[1, 5],
        backoffs: &[1.0, 2.0],
        jitters: &[0.0, 0.3, 0.5],
        trials: 2,
        timeouts_ms: &[(1000, 2000, 500), (45, 60, 45), (1000, 2000, 25)],
        connections: &[1, 2, 10],
        waits_ms: &[0, 5, 30],
    };

    /// Timeouts and open periods short against the recording, so that refusals end.
    const SHORT: Regime = Regime {
        window: (2, 2),
        rates: &[0.5],
        open_ms: (40, 100, 30),
        open_max_times: &[1, 3, 7],
        backoffs: &[1.0, 2.0],
        jitters: &[0.0, 0.5],
        trials: 2,
        timeouts_ms: &[(20, 25, 12)],
        connections: &[1, 2, 10],
        waits_ms: &[0, 15],
    };

    /// Short timeouts and open periods, trials that time out or whose callers give up,
    /// waits for a permit, jitter and backoff.
    const TIGHT: Regime = Regime {
        window: (1, 4),
        rates: &[0.3, 0.5, 1.0],
        open_ms: (20, 80, 20),
        open_max_times: &[1, 4],
        backoffs: &[1.0, 3.0],
        jitters: &[0.0, 0.9],
        trials: 3,
        timeouts_ms: &[(24, 25, 24)],
        connections: &[1, 3, 10],
        waits_ms: &[0, 3, 15],
    };

    /// Calls 10–60 ms apart, each 1–40 ms long: successes, failures, now and then a
    /// timeout or a call its caller gave up, and `unknown` refused ones in one or two
    /// gaps.
    fn recording(rng: &mut fastrand::Rng, calls: usize, unknown: usize) -> Vec<Call> {
        let mut start = 0;
        let gap_at = rng.u64(..(calls - unknown) as u64) as usize;
        let split = rng.u64(..2) == 0;
        (0..calls)
            .map(|i| {
                start += 10_000 + rng.u64(..50_000);
                let in_gap = (gap_at..gap_at + unknown).contains(&i);
                let outcome = if in_gap && !(split && i == gap_at + unknown / 2) {
                    Recorded::Rejected
                } else {
                    match rng.u64(..20) {
                        0..=11 => Recorded::Success,
                        12..=17 => Recorded::Failure,
                        18 => Recorded::Timeout,
                        _ => Recorded::Cancelled,
                    }
                };
                Call {
                    start,
                    duration: 1_000 + rng.u64(..40_000) as u32,
                    outcome,
                }
            })
            .collect()
    }

    /// A recording's calls and an operator's actions, with what a replay derives from
    /// them: each unknown call's answers and the incidents.
    struct Case<'c> {
        calls: &'c [Call],
        actions: &'c [(u64, ManualAction)],
        options: Arc<[Options]>,
        incidents: Vec<Incident>,
    }

    impl<'c> Case<'c> {
        fn new(calls: &'c [Call], actions: &'c [(u64, ManualAction)]) -> Self {
            Case {
                calls,
                actions,
                options: guess::options(calls).into(),
                incidents: incidents(calls, &[]),
            }
        }

        fn replayable(&self) -> Replayable<'_> {
            Replayable {
                calls: self.calls,
                actions: self.actions,
                options: &self.options,
                incidents: &self.incidents,
                read_limit: None,
            }
        }
    }

    /// An operator forcing the breaker open at `at` and resetting it `long` µs later.
    fn forced_open(at: u64, long: u64) -> Vec<(u64, ManualAction)> {
        vec![
            (at, ManualAction::ForceOpen),
            (at + long, ManualAction::Reset),
        ]
    }

    /// Every answering of the calls without an outcome, replayed one by one: each of
    /// its figures lies inside the ranges the paths gave.
    #[test]
    fn every_answering_s_figures_lie_inside_the_ranges() {
        let mut rng = fastrand::Rng::with_seed(0x0005_EED0_FA33);
        let mut paths_fewer_than_answerings = 0;
        let (mut cut_short, mut settled_before) = (0, 0);
        for case in 0..64 {
            let (settings, _) = drawn::settings(&mut rng, &BRUTE);
            let system = settings.system("s").unwrap();
            let unknown = 2 + rng.u64(..5) as usize;
            let length = 14 + rng.u64(..8) as usize;
            let calls = recording(&mut rng, length, unknown);
            let k = calls.iter().filter(|c| guess::unknown(c)).count();
            // In a quarter of the cases an operator forces the breaker open for a while.
            let actions = if case % 4 == 3 {
                forced_open(calls[calls.len() / 3].start + 1, 100_000)
            } else {
                Vec::new()
            };
            let input = Case::new(&calls, &actions);
            let replayable = input.replayable();
            let assessed = replayable.assess(system, Budget { replays: 1 << 12 });
            assert!(assessed.bounds.proof.exhaustive, "case {case}");
            assert!(
                assessed.bounds.replayed.contains(&assessed.figures),
                "case {case}"
            );
            assert!(assessed.bounds.possible.is_none());
            if assessed.bounds.proof.paths < 1 << k {
                paths_fewer_than_answerings += 1;
            }
            // With a budget of one path, the ranges proven without replaying each way.
            let short = replayable.assess(system, Budget { replays: 1 });
            let possible = short.bounds.possible.as_ref();
            assert_eq!(possible.is_some(), !short.bounds.proof.exhaustive);
            if let Some(possible) = possible {
                cut_short += 1;
                assert!(
                    possible.contains_ranges(&assessed.bounds.replayed),
                    "case {case}"
                );
                if possible.figures[Figure::FailingLetThrough].low
                    + possible.figures[Figure::HealthyRefused].low
                    > 0
                {
                    settled_before += 1;
                }
            }
            for bits in 0..1_u32 << k {
                let each: Vec<bool> = (0..k).map(|i| bits >> i & 1 == 1).collect();
                let replay = replayable.run(system, Choice::Each(each.clone()));
                let unknown: Vec<(Recorded, u32)> = input
                    .options
                    .iter()
                    .zip(&each)
                    .map(|(o, fails)| o.answer(*fails))
                    .collect();
                let truth = figures(&calls, &replay, &input.incidents, &unknown, limit(system));
                assert!(
                    assessed.bounds.replayed.contains(&truth),
                    "case {case}, answering {bits:b} of {k}: {truth:?} outside {:?}",
                    assessed.bounds
                );
                if let Some(possible) = possible {
                    assert!(
                        possible.contains(&truth),
                        "case {case}, answering {bits:b} of {k}: {truth:?} outside the possible {possible:?}"
                    );
                }
            }
        }
        // The paths are fewer than the answerings when the replayed guard refuses some
        // of the calls: the walk does not replay what cannot change a figure.
        assert!(paths_fewer_than_answerings > 0);
        // One path was not every way in most cases; their possible ranges held every
        // answering, and counted the calls before the first answer asked as replayed.
        assert!(cut_short > 12, "{cut_short}");
        assert!(settled_before > 0);
    }

    /// Every call `replay` refused is one `refusable` says the breaker (or the
    /// bulkhead) may refuse; `context` describes the case.
    fn refused_as_allowed(replay: &Replay, refusable: &Refusable, context: impl Fn() -> String) {
        for (i, fate) in replay.fates.iter().enumerate() {
            let allowed = match fate {
                Fate::Refused => refusable.breaker[i],
                Fate::BulkheadFull => refusable.bulkhead[i],
                _ => true,
            };
            assert!(
                allowed,
                "call {i} {fate:?}, said not to be: {}\n{:?}",
                context(),
                replay.transitions
            );
        }
    }

    /// Every answering's replay and figures, one by one.
    fn every_answering(
        replayable: &Replayable<'_>,
        system: &SystemSettings,
    ) -> Vec<(Replay, Figures)> {
        let k = replayable.options.len();
        (0..1_u32 << k)
            .map(|bits| {
                let each: Vec<bool> = (0..k).map(|i| bits >> i & 1 == 1).collect();
                let replay = replayable.run(system, Choice::Each(each.clone()));
                let unknown: Vec<(Recorded, u32)> = replayable
                    .options
                    .iter()
                    .zip(&each)
                    .map(|(o, fails)| o.answer(*fails))
                    .collect();
                let figures = figures(
                    replayable.calls,
                    &replay,
                    replayable.incidents,
                    &unknown,
                    limit(system),
                );
                (replay, figures)
            })
            .collect()
    }

    /// The possible ranges where the breaker's refusals end within the recording: a
    /// few calls without an outcome early, then a long stretch of recorded ones (mostly
    /// successes, now and then a failure, a slow call, one its caller gave up), timeouts
    /// and open periods short against it, with jitter, a bulkhead of one or two, an
    /// operator's forced opening. Every answering lies inside them, and they are
    /// narrower than every call counted at its worst.
    #[test]
    fn possible_ranges_hold_every_answering_where_refusals_end() {
        let mut rng = fastrand::Rng::with_seed(0x0A33_0B0D);
        let mut narrower = 0;
        for case in 0..240 {
            let (settings, text) = drawn::settings(&mut rng, &SHORT);
            let system = settings.system("s").unwrap();
            let mut start = 0;
            let unknown_from = rng.usize(..4);
            let unknown = 1 + rng.usize(..5);
            let calls: Vec<Call> = (0..40)
                .map(|i| {
                    start += 4_000 + rng.u64(..20_000);
                    let outcome = if (unknown_from..unknown_from + unknown).contains(&i) {
                        Recorded::Rejected
                    } else {
                        // Every other case sparse: few calls that may count a failure.
                        let odds = if case % 2 == 0 { 120 } else { 40 };
                        match rng.u64(..odds) {
                            0 | 1 => Recorded::Failure,
                            2 => Recorded::Slow,
                            3 => Recorded::Cancelled,
                            4 => Recorded::Timeout,
                            _ => Recorded::Success,
                        }
                    };
                    Call {
                        start,
                        duration: 500
                            + rng.u64(
                                ..if i % 9 == 8 && case % 2 == 1 {
                                    16_000
                                } else {
                                    10_000
                                },
                            ) as u32,
                        outcome,
                    }
                })
                .collect();
            let actions = if case % 3 == 2 {
                forced_open(calls[30].start - 500, 30_000)
            } else {
                Vec::new()
            };
            let input = Case::new(&calls, &actions);
            let replayable = input.replayable();
            let assessed = replayable.assess(system, Budget { replays: 1 });
            let Some(possible) = assessed.bounds.possible.as_ref() else {
                continue;
            };
            // Each call refused in some answering is one the proof says may be.
            let refusable = replayable.proven().refusable(system);
            for (bits, (replay, truth)) in every_answering(&replayable, system).iter().enumerate() {
                let case = format!("case {case}, answering {bits:b}");
                assert!(
                    possible.contains(truth),
                    "{case}: {truth:?} outside the possible {possible:?}\n{text}\n{calls:?}\n{actions:?}"
                );
                refused_as_allowed(replay, &refusable, || {
                    format!("{case}\n{text}\n{calls:?}\n{actions:?}")
                });
            }
            let could_be_healthy = calls
                .iter()
                .filter(|c| c.outcome == Recorded::Success || guess::unknown(c))
                .count();
            // At least ten calls that may succeed proven never refused.
            if possible.figures[Figure::HealthyRefused].high + 10 <= could_be_healthy {
                narrower += 1;
            }
        }
        assert!(narrower > 20, "{narrower}");
    }

    /// Many recordings, each replayed with one random answering: every call the
    /// replayed breaker refused is one the proof says it may refuse, and likewise the
    /// bulkhead. Timeouts and open periods short against the recording, trials that
    /// time out or whose callers give up, waits for a permit, jitter and backoff.
    #[test]
    fn refusals_come_only_where_the_proof_allows() {
        let mut rng = fastrand::Rng::with_seed(0x0A33_F1A6);
        for case in 0..4_000 {
            let (settings, text) = drawn::settings(&mut rng, &TIGHT);
            let system = settings.system("s").unwrap();
            let mut start = 0;
            let calls: Vec<Call> = (0..30)
                .map(|_| {
                    start += 1_000 + rng.u64(..12_000);
                    let outcome = match rng.u64(..24) {
                        0..=2 => Recorded::Failure,
                        3..=5 => Recorded::Cancelled,
                        6 => Recorded::Timeout,
                        7 => Recorded::Rejected,
                        _ => Recorded::Success,
                    };
                    Call {
                        start,
                        duration: 500 + rng.u64(..23_000) as u32,
                        outcome,
                    }
                })
                .collect();
            let actions = if case % 5 == 4 {
                forced_open(calls[15].start - 300, 20_000)
            } else {
                Vec::new()
            };
            let input = Case::new(&calls, &actions);
            let replayable = input.replayable();
            let each: Vec<bool> = input.options.iter().map(|_| rng.bool()).collect();
            let replay = replayable.run(system, Choice::Each(each));
            let refusable = replayable.proven().refusable(system);
            refused_as_allowed(&replay, &refusable, || {
                format!("case {case}\n{text}\n{calls:?}\n{actions:?}")
            });
        }
    }

    /// The possible openings past the first answer asked: at least one, however short
    /// the rest against the open period.
    #[test]
    fn an_opening_after_the_first_answer_is_possible() {
        let settings = Settings::parse(
            "[systems.s]\ncb_window_size = 2\ncb_min_calls = 2\ncb_failure_rate = 0.5\ncb_open_duration = \"5s\"\ntotal_timeout = \"2s\"\nread_timeout = \"1s\"\nconnect_timeout = \"0.5s\"\n",
            "test.toml",
        )
        .unwrap();
        let call = |ms: u64, outcome| Call {
            start: ms * 1_000,
            duration: 1_000,
            outcome,
        };
        // One call without an outcome, asked first, then two failures that open it.
        let calls = [
            call(0, Recorded::Success),
            call(10, Recorded::Rejected),
            call(20, Recorded::Failure),
            call(30, Recorded::Failure),
            call(40, Recorded::Success),
        ];
        let input = Case::new(&calls, &[]);
        let replayable = input.replayable();
        let system = settings.system("s").unwrap();
        let assessed = replayable.assess(system, Budget { replays: 1 });
        assert!(!assessed.bounds.proof.exhaustive);
        assert_eq!(assessed.figures.openings.len(), 1);
        let possible = assessed.bounds.possible.expect("past the budget");
        assert_eq!(
            possible.figures[Figure::Openings],
            Range { low: 0, high: 1 }
        );
        // The call before the first answer ran in every way; the failures after it may
        // have been refused, and the last call, after them (the call asked first ran:
        // nothing before it may count a failure).
        assert_eq!(
            possible.figures[Figure::FailingLetThrough],
            Range { low: 0, high: 3 }
        );
        assert_eq!(
            possible.figures[Figure::HealthyRefused],
            Range { low: 0, high: 1 }
        );
    }

    /// A budget smaller than the paths: the ranges say they are not exhaustive, and
    /// still hold the estimate and both ends.
    #[test]
    fn past_the_budget_the_ranges_say_so() {
        // A recording in which all six unknown calls run (in about half of what this
        // generator makes, one of them falls where the replayed guard refuses it).
        let mut rng = fastrand::Rng::with_seed(1);
        let settings = Settings::parse(
            "[systems.s]\ncb_window_size = 20\ncb_min_calls = 20\ncb_failure_rate = 0.9\n",
            "test.toml",
        )
        .unwrap();
        // A setting that never opens lets every call run: 2^6 paths.
        let calls = recording(&mut rng, 20, 6);
        let input = Case::new(&calls, &[]);
        let replayable = input.replayable();
        let system = settings.system("s").unwrap();
        let all = replayable.assess(system, Budget { replays: 1 << 12 });
        assert_eq!(all.bounds.proof.paths, 64);
        assert!(all.bounds.proof.exhaustive);
        let few = replayable.assess(system, Budget { replays: 3 });
        assert_eq!(few.bounds.proof.paths, 3);
        assert!(!few.bounds.proof.exhaustive);
        assert!(few.bounds.replayed.contains(&few.figures));
        // Every call let run: the failing ones let through range over all 6, and the
        // range proven past the budget holds them.
        let through = all.bounds.replayed.figures[Figure::FailingLetThrough];
        assert_eq!(through.high - through.low, 6);
        let proven = few.bounds.proven().expect("proven past the budget");
        let held = proven.figures[Figure::FailingLetThrough];
        assert!(
            held.low <= through.low && through.high <= held.high,
            "{held:?}"
        );
    }

    /// Ten minutes at ten calls a second under the guide's defaults: healthy, then a
    /// minute in which half the calls fail, the recording's breaker refusing most of
    /// it, then healthy again. Replayed with a looser rate past a budget of two
    /// replays, the proof leaves the healthy minutes before and well after the
    /// incident out of the calls that may have been refused.
    #[test]
    fn the_healthy_stretches_around_an_incident_are_proven() {
        let settings =
            Settings::parse("[systems.s]\ncb_failure_rate = 0.8\n", "test.toml").unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        let calls: Vec<Call> = (0..6_000_u64)
            .map(|i| {
                let second = i / 10;
                let outcome = match second {
                    250..=299 if i % 50 != 0 => Recorded::Rejected,
                    240..=299 if rng.bool() => Recorded::Failure,
                    _ => Recorded::Success,
                };
                Call {
                    start: i * 100_000,
                    duration: 20_000 + rng.u64(..30_000) as u32,
                    outcome,
                }
            })
            .collect();
        let input = Case::new(&calls, &[]);
        let replayable = input.replayable();
        let system = settings.system("s").unwrap();
        let assessed = replayable.assess(system, Budget { replays: 2 });
        let possible = assessed.bounds.possible.expect("past the budget");
        let healthy = calls
            .iter()
            .filter(|c| c.outcome == Recorded::Success || guess::unknown(c))
            .count();
        // The calls from the incident's first failure, through its minute, an open
        // period (30 s) and its trials may have been refused (849, about 85 s of
        // calls); none of the healthy ones before it or a minute after it.
        let high = possible.figures[Figure::HealthyRefused].high;
        assert!(high < 1_000, "{high} of {healthy}");
        assert!(high >= assessed.bounds.replayed.figures[Figure::HealthyRefused].high);
        assert_eq!(possible.figures[Figure::BulkheadRefused].high, 0);
    }

    /// The settings of the hand-worked cases below: an open period of 1 s and no
    /// jitter, backoff or bulkhead wait, so the bounds can be worked out by hand.
    const BY_HAND: &str = "[systems.s]\ncb_window_size = 2\ncb_min_calls = 2\ncb_failure_rate = 0.5\ncb_open_duration = \"1s\"\ncb_half_open_calls = 1\nread_timeout = \"1s\"\ntotal_timeout = \"2s\"\ncb_slow_threshold = \"0.5s\"\nconnect_timeout = \"0.5s\"\nbulkhead_wait = \"0s\"\nmax_connections = 10\n";

    /// A call of `ms_long` milliseconds at `ms`.
    fn at(ms: u64, ms_long: u32, outcome: Recorded) -> Call {
        Call {
            start: ms * 1_000,
            duration: ms_long * 1_000,
            outcome,
        }
    }

    /// The module page of `possible`, worked by hand on one recording: a call without
    /// an outcome at 1 s (the first answer asked), healthy calls, five failures at
    /// 30 s (an incident), healthy calls again. Each figure is what the page's rules
    /// give, to the call.
    #[test]
    fn the_possible_ranges_are_what_the_proof_s_rules_give() {
        let settings = Settings::parse(BY_HAND, "test.toml").unwrap();
        let system = settings.system("s").unwrap();
        let mut calls = vec![
            at(0, 10, Recorded::Success),
            at(1_000, 0, Recorded::Rejected),
            at(10_000, 10, Recorded::Success),
            at(11_000, 10, Recorded::Success),
            // Exactly when the breaker may be half-open at the latest after the
            // unknown call's failure (the third call counted from it ends at 11.01 s,
            // and the open period is 1 s): its first trial.
            at(12_010, 10, Recorded::Success),
        ];
        calls.extend((0..5).map(|i| at(30_000 + 100 * i, 10, Recorded::Failure)));
        calls.extend((4..9).map(|i| at(10_000 * i, 10, Recorded::Success)));
        let input = Case::new(&calls, &[]);
        let replayable = input.replayable();

        // The unknown call's failure may keep the breaker refusing until its trial
        // at 12.01 s has ended; the first failure at 30 s finds it closed, and the
        // last (30.4 s) may keep it refusing until the trial at 60 s has ended: two
        // calls after it are counted at 40 s and 50 s, the breaker opens at 50.01 s
        // at the latest and is half-open at 51.01 s.
        let Refusable { breaker, bulkhead } = replayable.proven().refusable(system);
        let t = true;
        let f = false;
        assert_eq!(breaker, [f, f, t, t, t, f, t, t, t, t, t, t, t, f, f]);
        assert_eq!(bulkhead, [f; 15]);

        let assessed = replayable.assess(system, Budget { replays: 1 });
        let possible = assessed.bounds.possible.expect("past the budget");
        // The healthy call before the first answer asked ran in every way.
        // The unknown call and the five failures may have run; the first failure
        // did in every way.
        assert_eq!(
            possible.figures[Figure::FailingLetThrough],
            Range { low: 1, high: 6 }
        );
        assert_eq!(
            possible.figures[Figure::FailingRefused],
            Range { low: 0, high: 4 }
        );
        assert_eq!(
            possible.figures[Figure::HealthyRefused],
            Range { low: 0, high: 6 }
        );
        assert_eq!(
            possible.figures[Figure::BulkheadRefused],
            Range { low: 0, high: 0 }
        );
        // One opening per call that may count a failure, and one more: fewer than
        // the open periods from 1 s to 80 s and the longest a call runs.
        assert_eq!(
            possible.figures[Figure::Openings],
            Range { low: 0, high: 7 }
        );
        let (fast, through) = possible.incidents[0];
        assert_eq!(through, Range { low: 1, high: 5 });
        // The second failure may be refused, 100 ms into the incident; or none.
        assert_eq!(
            fast,
            FastFailRange {
                soonest: Some(100_000),
                latest: None
            }
        );
    }

    /// Openings past the first answer asked: with many calls that may count a failure,
    /// at most one per open period from that answer to the last call's end bound
    /// (its start, a bulkhead's wait, `total_timeout` and the timers' slack), and one
    /// more.
    #[test]
    fn openings_are_at_most_one_per_open_period_to_the_last_end_bound() {
        let settings = Settings::parse(BY_HAND, "test.toml").unwrap();
        let system = settings.system("s").unwrap();
        let mut calls = vec![at(0, 0, Recorded::Rejected)];
        calls.extend((1..30).map(|i| at(100 * i, 10, Recorded::Failure)));
        calls.push(at(2_995, 10, Recorded::Failure));
        let input = Case::new(&calls, &[]);
        let assessed = input.replayable().assess(system, Budget { replays: 1 });
        let possible = assessed.bounds.possible.expect("past the budget");
        // From 0 to 2.995 s + 2 s + 6 ms = 5.001 s: five whole periods, and one more.
        assert_eq!(
            possible.figures[Figure::Openings],
            Range { low: 0, high: 6 }
        );
    }

    /// The bulkhead's end bounds, by hand: one permit, a wait of 3 ms and a total
    /// timeout of 25 ms, each timer up to 3 ms late. A timeout holds its permit until
    /// 28 ms; a call that finds the permit taken may wait 6 ms for it.
    #[test]
    fn the_bulkhead_may_refuse_a_call_only_while_its_permit_may_be_held() {
        let settings = Settings::parse(
            "[systems.s]\nread_timeout = \"24ms\"\ntotal_timeout = \"25ms\"\ncb_slow_threshold = \"20ms\"\nconnect_timeout = \"5ms\"\nbulkhead_wait = \"3ms\"\nmax_connections = 1\n",
            "test.toml",
        )
        .unwrap();
        let system = settings.system("s").unwrap();
        let calls = [
            // Holds the permit until 28 ms at the latest.
            at(0, 25, Recorded::Timeout),
            // Finds it free; holds it until 50 ms.
            at(40, 10, Recorded::Success),
            // Finds it taken: may be refused; ends by 45 + 6 + 10 = 61 ms.
            at(45, 10, Recorded::Success),
            // Finds it free again.
            at(62, 10, Recorded::Success),
        ];
        let input = Case::new(&calls, &[]);
        let refusable = input.replayable().proven().refusable(system);
        assert_eq!(refusable.bulkhead, [false, false, true, false]);
    }

    /// The trials after a failure are the first calls admitted from the earliest the
    /// breaker can be half-open on: an open period after the failure's start, less a
    /// bulkhead's wait and the timers' slack (here 997 ms). A call admitted then, if
    /// the breaker closed before it, ends the refusals no sooner than its own end.
    #[test]
    fn a_call_admitted_at_the_earliest_half_open_instant_may_hold_the_refusals_until_its_end() {
        let settings = Settings::parse(BY_HAND, "test.toml").unwrap();
        let system = settings.system("s").unwrap();
        let calls = [
            at(0, 10, Recorded::Failure),
            at(10, 10, Recorded::Success),
            // The third call counted from the failure: the breaker opens by 30 ms and
            // is half-open by 1,030 ms.
            at(20, 10, Recorded::Success),
            // At 0 + 1 s - 3 ms, until 1,397 ms.
            at(997, 400, Recorded::Success),
            // The trial, until 1,110 ms.
            at(1_100, 10, Recorded::Success),
            at(1_200, 10, Recorded::Success),
            at(5_000, 10, Recorded::Success),
        ];
        let input = Case::new(&calls, &[]);
        let refusable = input.replayable().proven().refusable(system);
        let (t, f) = (true, false);
        assert_eq!(refusable.breaker, [f, t, t, t, t, t, f]);
    }

    /// An incident's time to fast fail counts the calls refused before the next
    /// incident starts: a call the breaker may refuse at that very start is the next
    /// incident's. Here the first incident's five failures never open the breaker
    /// (`cb_failure_rate = 1.0`, never four failures in a row) and lie before the first
    /// answer asked (3 s); the call asked lets the breaker refuse the second
    /// incident's first failure (8 s).
    #[test]
    fn a_refusal_at_the_next_incident_s_start_is_not_the_first_incident_s_fast_fail() {
        let settings = Settings::parse(
            "[systems.s]\ncb_window_size = 4\ncb_min_calls = 4\ncb_failure_rate = 1.0\ncb_open_duration = \"1s\"\ncb_half_open_calls = 1\nread_timeout = \"1s\"\ntotal_timeout = \"2s\"\ncb_slow_threshold = \"0.5s\"\nconnect_timeout = \"0.5s\"\nbulkhead_wait = \"0s\"\nmax_connections = 10\n",
            "test.toml",
        )
        .unwrap();
        let system = settings.system("s").unwrap();
        let mut calls: Vec<Call> = (0..14)
            .map(|i| {
                let failing = i % 2 == 0 && i <= 8;
                let outcome = if failing {
                    Recorded::Failure
                } else {
                    Recorded::Success
                };
                at(50 * i, 10, outcome)
            })
            .collect();
        // The trial after the first incident: the refusals it may allow end at
        // 2,010 ms.
        calls.push(at(2_000, 10, Recorded::Success));
        calls.push(at(3_000, 0, Recorded::Rejected));
        calls.extend((0..5).map(|i| at(8_000 + 100 * i, 10, Recorded::Failure)));
        calls.push(at(10_000, 10, Recorded::Success));
        let input = Case::new(&calls, &[]);
        assert_eq!(input.incidents.len(), 2);
        let assessed = input.replayable().assess(system, Budget { replays: 1 });
        let possible = assessed.bounds.possible.expect("past the budget");
        assert_eq!(possible.incidents[0].0, FastFailRange::default());
        assert_eq!(possible.incidents[1].0.soonest, Some(0));
    }
}
