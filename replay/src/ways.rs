//! Every way the calls without a recorded outcome could have been answered, replayed:
//! each figure of a setting as a range that holds its value under each of them.
//!
//! **The claim.** Each call the recording's guard refused is answered succeeding or
//! failing (each at the duration the evidence near its gap gives, [`guess::Options`](super::guess::Options)).
//! There are 2^k such answerings of k calls; when every way was replayed, each
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
//! Past the budget of replays ([`budget`](super::prepared::budget)), the paths walked say nothing of the others
//! ([`Ranges::every_way`] false), and no range is given: each figure is then the
//! estimate with its stated error, or "cannot tell" ([`verdict`](super::verdict)). A
//! setting looser than the recording's lets most of them run and has too many paths;
//! so may a stricter one over many half-open periods, each trial a decision.
//!
//! The test below checks the claim against brute force: small recordings, every one of
//! the 2^k answerings replayed, each figure inside its range.

use outbound_guard_settings::SystemSettings;

use super::engine::{replay, Choice, Replay};
use super::figures::{figures, limit, see_holes, Figures, Ranges};
use super::holes::Hole;
use super::prepared::Prepared;
use super::recording::Recorded;
use super::report::Variant;

impl Prepared<'_> {
    fn run(&self, settings: &SystemSettings, choice: Choice) -> Replay {
        replay(
            settings,
            &self.system.calls,
            &self.actions,
            (&self.options, choice),
            self.read_limit,
        )
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
            &self.system.calls,
            replay,
            &self.incidents,
            &self.answers(replay, fill),
            limit,
        )
    }

    /// Both ends of `replay`'s figures over the answers of the calls it refused.
    fn widen(&self, ranges: &mut Ranges, replay: &Replay, limit: u64) {
        for fill in [false, true] {
            ranges.widen(&self.figures(replay, Some(fill), limit));
        }
    }

    /// `settings` assessed: the estimate's replay, then every path within `budget`
    /// replays; unlabelled, without draws (see [`Prepared::variant`]).
    pub(crate) fn assess(&self, settings: &SystemSettings, budget: usize) -> Variant {
        let estimate: Vec<bool> = self.options.iter().map(|o| o.estimate_fails).collect();
        let replay = self.run(settings, Choice::Each(estimate));
        let limit = limit(settings);
        let figures = self.figures(&replay, None, limit);
        let mut ranges = Ranges::of(&figures);
        let mut replays = 1;
        if self.options.is_empty() {
            ranges.paths = 1;
            ranges.every_way = true;
            return Variant::assessed(settings, replay, figures, ranges, replays);
        }
        self.widen(&mut ranges, &replay, limit);
        let mut paths = 0;
        let mut stack: Vec<Vec<bool>> = vec![Vec::new()];
        while let Some(path) = stack.pop() {
            if paths == budget {
                stack.push(path);
                break;
            }
            let walked = self.run(settings, Choice::Path(path.clone()));
            paths += 1;
            replays += 1;
            self.widen(&mut ranges, &walked, limit);
            // Each decision past the path's end went the default way (succeeding): the
            // other way is a path of its own.
            for branch in path.len()..walked.decisions {
                let mut other = path.clone();
                other.resize(branch, false);
                other.push(true);
                stack.push(other);
            }
        }
        // Past the budget, the ranges of the paths walked hold no promise, and none
        // is given.
        ranges.paths = paths;
        ranges.every_way = stack.is_empty();
        Variant::assessed(settings, replay, figures, ranges, replays)
    }
}

impl Prepared<'_> {
    /// `settings`' figures on each of `draws` (one answer for each call without a
    /// recorded outcome, failing or not), paired: the n-th of every setting on the same
    /// answers; the calls in `holes` left out as `see_holes` says. `estimate`, its
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
                let mut f = figures(&self.system.calls, replay, &self.incidents, &answers, limit);
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
    use crate::drawn::{self, Regime};
    use crate::figures::{incidents, Figure};
    use std::sync::Arc;

    use crate::figures::Incident;
    use crate::guess::{self, Options};
    use crate::recording::{Call, SystemRecording};
    use outbound_guard::ManualAction;
    use outbound_guard_settings::Settings;

    /// Settings for the brute-force check: timeouts long against the recording, or
    /// short (the breaker's refusals then end within it); now and then a bulkhead that
    /// fills.
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
        system: SystemRecording,
        actions: &'c [(u64, ManualAction)],
        options: Arc<[Options]>,
        incidents: Vec<Incident>,
    }

    impl<'c> Case<'c> {
        fn new(calls: &[Call], actions: &'c [(u64, ManualAction)]) -> Self {
            Case {
                system: SystemRecording {
                    calls: calls.to_vec(),
                    ..SystemRecording::default()
                },
                actions,
                options: guess::options(calls).into(),
                incidents: incidents(calls, &[]),
            }
        }

        /// The recording prepared, without draws, its actions as given.
        fn replayable(&self) -> Prepared<'_> {
            Prepared {
                name: "s".into(),
                system: &self.system,
                actions: self.actions.to_vec(),
                read_limit: None,
                options: self.options.clone(),
                draws: Vec::new().into(),
                budget: 0,
                incidents: self.incidents.clone(),
                holes: Vec::new(),
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
        let mut cut_short = 0;
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
            let assessed = replayable.assess(system, 1 << 12);
            assert!(assessed.ranges.every_way, "case {case}");
            assert!(assessed.ranges.contains(&assessed.figures), "case {case}");
            assert!(assessed.ranges.proven().is_some());
            if assessed.ranges.paths < 1 << k {
                paths_fewer_than_answerings += 1;
            }
            // With a budget of one path, a range only where that path was every way.
            let short = replayable.assess(system, 1);
            assert_eq!(short.ranges.proven().is_some(), short.ranges.every_way);
            if !short.ranges.every_way {
                cut_short += 1;
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
                    assessed.ranges.contains(&truth),
                    "case {case}, answering {bits:b} of {k}: {truth:?} outside {:?}",
                    assessed.ranges
                );
            }
        }
        // The paths are fewer than the answerings when the replayed guard refuses some
        // of the calls: the walk does not replay what cannot change a figure.
        assert!(paths_fewer_than_answerings > 0);
        // One path was not every way in most cases: those give no range.
        assert!(cut_short > 12, "{cut_short}");
    }

    /// A budget smaller than the paths: the ranges say not every way was replayed, and
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
        let all = replayable.assess(system, 1 << 12);
        assert_eq!(all.ranges.paths, 64);
        assert!(all.ranges.every_way);
        let few = replayable.assess(system, 3);
        assert_eq!(few.ranges.paths, 3);
        assert!(!few.ranges.every_way);
        assert!(few.ranges.contains(&few.figures));
        // Every call let run: the failing ones let through range over all 6 where
        // every way was replayed; past the budget no range is told.
        let through = all.ranges.figures[Figure::FailingLetThrough];
        assert_eq!(through.high - through.low, 6);
        assert!(all.ranges.proven().is_some());
        assert!(few.ranges.proven().is_none());
    }
}
