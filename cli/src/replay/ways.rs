//! Every way the calls without a recorded outcome could have been answered, replayed:
//! each figure of a setting as a range that holds its value under each of them.
//!
//! **The claim.** Each call the recording's guard refused is answered succeeding or
//! failing (each at the duration the evidence near its gap gives, [`guess::Options`]).
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
//! Past the budget of replays ([`Budget`]), the ranges are those of the replays made,
//! and say so ([`Proof::exhaustive`] false): the paths walked, all of them failing, and
//! as many samples again (each gap all failing or all succeeding, or each call failing
//! as often as the estimate has its gap fail). Beside them, [`Bounds::possible`] holds
//! every way, proven without replaying each ([`Replayable::possible`]): exact up to the
//! first answer asked, each later call at its worst. A setting looser than the recording's
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
use super::figures::{
    figures, figures_in, Bounds, FastFailRange, Figures, Incident, Proof, Range, Span,
};
use super::guess::{self, Options};
use super::recording::{Call, Recorded};

/// How many replays of a setting may be spent on its ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) replays: usize,
}

/// Replayed calls that the default budget's walk spends on one setting, about (as
/// many again on samples, past it).
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

/// A setting judged: its estimate, and its figures' ranges.
pub(crate) struct Judged {
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

    /// The answers of `replay`'s calls without a recorded outcome: the one asked, or,
    /// for a call it did not ask about, `fill` (failing or not), or without `fill`, the
    /// estimate's.
    fn answers(&self, replay: &Replay, fill: Option<bool>) -> Vec<Recorded> {
        self.options
            .iter()
            .zip(&replay.asked)
            .map(|(o, asked)| {
                let fails = asked.or(fill).unwrap_or(o.estimate_fails);
                o.answer(fails).0
            })
            .collect()
    }

    /// The figures of `replay` with its calls without a recorded outcome answered as
    /// [`answers`](Self::answers) says.
    fn figures(&self, replay: &Replay, fill: Option<bool>) -> Figures {
        figures(
            self.calls,
            replay,
            self.incidents,
            &self.answers(replay, fill),
        )
    }

    /// Both ends of `replay`'s figures over the answers of the calls it refused.
    fn widen(&self, bounds: &mut Bounds, replay: &Replay) {
        for fill in [false, true] {
            bounds.widen(&self.figures(replay, Some(fill)));
        }
    }

    /// The share of each gap's calls the estimate answers failing.
    fn gap_shares(&self) -> Vec<f64> {
        let gaps = self.options.last().map_or(0, |o| o.gap as usize + 1);
        let mut counts = vec![(0_u32, 0_u32); gaps];
        for o in self.options.iter() {
            let (failing, all) = &mut counts[o.gap as usize];
            *failing += u32::from(o.estimate_fails);
            *all += 1;
        }
        counts
            .iter()
            .map(|(failing, all)| f64::from(*failing) / f64::from((*all).max(1)))
            .collect()
    }

    /// Ranges that hold the figures of every way of answering, without replaying each:
    /// `replay`'s own figures up to the first answer any replay asks for (every way
    /// goes alike until then), and past it, each call counted at its worst.
    ///
    /// Every replay goes alike until the first call without a recorded outcome runs:
    /// that is no sooner than the earliest start of one `replay` asked about. A call
    /// that started before that had its fate by then (the bulkhead is first come, first
    /// served: one waiting for a permit got it, or gave up, before any later call ran);
    /// those calls, and the transitions before that instant, count as they did in
    /// `replay`, the ones it refused answered both ways. Every later call may have run
    /// or been refused: a call that can fail (a recorded failure, or one
    /// without an outcome) adds to the highest failing calls let through and failing
    /// calls refused, one that can succeed to the highest healthy calls refused, any to
    /// the highest bulkhead refusals; none adds to a lowest. An open period lasts at
    /// least `cb_open_duration` (backoff, jitter and retry hints only lengthen it), so
    /// from that instant to the last a call can end the breaker opens at most once per
    /// period, and once more, plus twice per operator's action (a forced opening, or a
    /// reset that lets it open at once). An incident that had no call refused by then
    /// may fail fast from its first later call on, or never.
    fn possible(&self, settings: &SystemSettings, replay: &Replay) -> Bounds {
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let first_ask = self
            .calls
            .iter()
            .filter(|c| guess::unknown(c))
            .zip(&replay.asked)
            .filter(|(_, asked)| asked.is_some())
            .map(|(c, _)| c.start)
            .min()
            .unwrap_or(u64::MAX);
        let settled = self.calls.partition_point(|c| c.start < first_ask);
        let made = replay.transitions.partition_point(|t| t.at < first_ask);
        let span = Span {
            calls: 0..settled,
            transitions: 0..made,
        };
        let [succeeding, failing] = [false, true].map(|fill| {
            figures_in(
                self.calls,
                replay,
                self.incidents,
                &self.answers(replay, Some(fill)),
                &span,
            )
        });
        let mut possible = Bounds::of(&succeeding);
        possible.widen(&failing);
        let later = &self.calls[settled..];
        let can_fail = |c: &Call| c.outcome.failing() || guess::unknown(c);
        let can_succeed = |c: &Call| c.outcome == Recorded::Success || guess::unknown(c);
        let count =
            |calls: &[Call], keep: &dyn Fn(&Call) -> bool| calls.iter().filter(|c| keep(c)).count();
        let upto = |range: &mut Range, more: usize| range.high += more;
        upto(&mut possible.failing_let_through, count(later, &can_fail));
        upto(&mut possible.failing_refused, count(later, &can_fail));
        upto(&mut possible.healthy_refused, count(later, &can_succeed));
        upto(&mut possible.bulkhead_refused, later.len());
        let longest =
            micros(settings.total_timeout()).saturating_add(micros(settings.bulkhead_wait()));
        let last_end = self
            .calls
            .iter()
            .map(|c| c.start.saturating_add(u64::from(c.duration).max(longest)))
            .max()
            .unwrap_or(0);
        let period = micros(settings.cb_open_duration()).max(1);
        let actions = self
            .actions
            .iter()
            .filter(|(at, _)| *at >= first_ask)
            .count();
        let periods =
            usize::try_from(last_end.saturating_sub(first_ask) / period).unwrap_or(usize::MAX);
        upto(
            &mut possible.openings,
            periods.saturating_add(1).saturating_add(2 * actions),
        );
        for (i, (fast, through)) in possible.incidents.iter_mut().enumerate() {
            let incident = self.incidents[i];
            let in_it = |c: &Call| (incident.start..=incident.end).contains(&c.start);
            upto(through, count(later, &|c| in_it(c) && can_fail(c)));
            if fast.soonest.is_none() {
                let until = self.incidents.get(i + 1).map_or(u64::MAX, |n| n.start);
                *fast = FastFailRange {
                    soonest: later
                        .iter()
                        .find(|c| c.start >= incident.start && c.start < until)
                        .map(|c| c.start - incident.start),
                    latest: None,
                };
            }
        }
        possible
    }

    /// `settings` judged: the estimate's replay, then every path within `budget`, or
    /// past it, samples.
    pub(crate) fn judge(&self, settings: &SystemSettings, budget: Budget) -> Judged {
        let estimate: Vec<bool> = self.options.iter().map(|o| o.estimate_fails).collect();
        let replay = self.run(settings, Choice::Each(estimate));
        let figures = self.figures(&replay, None);
        let mut bounds = Bounds::of(&figures);
        let mut replays = 1;
        if self.options.is_empty() {
            bounds.proof = Proof {
                paths: 1,
                exhaustive: true,
            };
            return Judged {
                replay,
                figures,
                bounds,
                replays,
            };
        }
        self.widen(&mut bounds, &replay);
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
            self.widen(&mut bounds, &walked);
            // Each decision past the path's end went the default way (succeeding): the
            // other way is a path of its own.
            for branch in path.len()..walked.decisions {
                let mut other = path.clone();
                other.resize(branch, false);
                other.push(true);
                stack.push(other);
            }
        }
        let exhaustive = stack.is_empty();
        if !exhaustive {
            // Past the budget: the other end, every call answered failing, then as many
            // samples again: each gap answered all failing or all succeeding (an
            // upstream down or up the whole gap), and each call failing as often as
            // the estimate has its gap fail.
            let all_fail = self.run(settings, Choice::Each(vec![true; self.options.len()]));
            replays += 1;
            self.widen(&mut bounds, &all_fail);
            let mut rng = fastrand::Rng::with_seed(0x0A33_5EED ^ self.options.len() as u64);
            for sample in 0..budget.replays {
                let each = if sample % 2 == 0 {
                    let gaps: Vec<bool> = (0..=self.options.last().map_or(0, |o| o.gap))
                        .map(|_| rng.bool())
                        .collect();
                    self.options.iter().map(|o| gaps[o.gap as usize]).collect()
                } else {
                    let shares = self.gap_shares();
                    self.options
                        .iter()
                        .map(|o| rng.f64() < shares[o.gap as usize])
                        .collect()
                };
                let sampled = self.run(settings, Choice::Each(each));
                replays += 1;
                self.widen(&mut bounds, &sampled);
            }
        }
        bounds.proof = Proof { paths, exhaustive };
        if !exhaustive {
            bounds.possible = Some(Box::new(self.possible(settings, &replay)));
        }
        Judged {
            replay,
            figures,
            bounds,
            replays,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::figures::incidents;
    use crate::replay::guess;
    use outbound_guard_settings::Settings;

    fn settings(rng: &mut fastrand::Rng) -> Settings {
        let mut text = format!(
            "[systems.s]\ncb_window_size = {}\ncb_min_calls = 2\ncb_failure_rate = {}\ncb_open_duration = \"{}ms\"\ncb_half_open_calls = {}\nread_timeout = \"1s\"\ntotal_timeout = \"2s\"\nconnect_timeout = \"0.5s\"\n",
            2 + rng.u64(..3),
            [0.3, 0.5, 0.7][rng.u64(..3) as usize],
            100 + 100 * rng.u64(..3),
            1 + rng.u64(..2),
        );
        // Now and then a bulkhead that fills (calls overlap), with or without a wait, a
        // slow-call threshold, a backoff and jitter.
        if rng.bool() {
            text += &format!(
                "max_connections = {}\nbulkhead_wait = \"{}ms\"\n",
                1 + rng.u64(..2),
                [0, 5, 30][rng.u64(..3) as usize]
            );
        }
        if rng.bool() {
            text += "cb_slow_threshold = \"25ms\"\ncb_open_backoff = 2\ncb_open_jitter = 0.5\ncb_open_max = \"1s\"\n";
        }
        Settings::parse(&text, "test.toml").unwrap()
    }

    /// Calls 10–60 ms apart, each 1–40 ms long: successes, failures, now and then a
    /// timeout, and `unknown` refused ones in one or two gaps.
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
                    match rng.u64(..10) {
                        0..=4 => Recorded::Success,
                        5..=8 => Recorded::Failure,
                        _ => Recorded::Timeout,
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

    /// Every answering of the calls without an outcome, replayed one by one: each of
    /// its figures lies inside the ranges the paths gave.
    #[test]
    fn every_answering_s_figures_lie_inside_the_ranges() {
        let mut rng = fastrand::Rng::with_seed(0x0005_EED0_FA33);
        let mut paths_fewer_than_answerings = 0;
        let (mut cut_short, mut settled_before) = (0, 0);
        for case in 0..48 {
            let settings = settings(&mut rng);
            let system = settings.system("s").unwrap();
            let unknown = 2 + rng.u64(..5) as usize;
            let length = 14 + rng.u64(..8) as usize;
            let calls = recording(&mut rng, length, unknown);
            let k = calls.iter().filter(|c| guess::unknown(c)).count();
            let options: Arc<[Options]> = guess::options(&calls).into();
            let found = incidents(&calls);
            let replayable = Replayable {
                calls: &calls,
                actions: &[],
                options: &options,
                incidents: &found,
                read_limit: None,
            };
            let judged = replayable.judge(system, Budget { replays: 1 << 12 });
            assert!(judged.bounds.proof.exhaustive, "case {case}");
            assert!(judged.bounds.contains(&judged.figures), "case {case}");
            assert!(judged.bounds.possible.is_none());
            if judged.bounds.proof.paths < 1 << k {
                paths_fewer_than_answerings += 1;
            }
            // With a budget of one path, the ranges proven without replaying each way.
            let short = replayable.judge(system, Budget { replays: 1 });
            let possible = short.bounds.possible.as_deref();
            assert_eq!(possible.is_some(), !short.bounds.proof.exhaustive);
            if let Some(possible) = possible {
                cut_short += 1;
                assert!(possible.contains_bounds(&judged.bounds), "case {case}");
                if possible.failing_let_through.low + possible.healthy_refused.low > 0 {
                    settled_before += 1;
                }
            }
            for bits in 0..1_u32 << k {
                let each: Vec<bool> = (0..k).map(|i| bits >> i & 1 == 1).collect();
                let replay = replayable.run(system, Choice::Each(each.clone()));
                let unknown: Vec<Recorded> = options
                    .iter()
                    .zip(&each)
                    .map(|(o, fails)| o.answer(*fails).0)
                    .collect();
                let truth = figures(&calls, &replay, &found, &unknown);
                assert!(
                    judged.bounds.contains(&truth),
                    "case {case}, answering {bits:b} of {k}: {truth:?} outside {:?}",
                    judged.bounds
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
        let options: Arc<[Options]> = guess::options(&calls).into();
        let replayable = Replayable {
            calls: &calls,
            actions: &[],
            options: &options,
            incidents: &[],
            read_limit: None,
        };
        let system = settings.system("s").unwrap();
        let judged = replayable.judge(system, Budget { replays: 1 });
        assert!(!judged.bounds.proof.exhaustive);
        assert_eq!(judged.figures.openings.len(), 1);
        let possible = judged.bounds.possible.expect("past the budget");
        assert_eq!(possible.openings, Range { low: 0, high: 1 });
        // The call before the first answer ran in every way; the failures after it may
        // have been refused.
        assert_eq!(possible.failing_let_through, Range { low: 0, high: 3 });
        assert_eq!(possible.healthy_refused, Range { low: 0, high: 2 });
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
        let options: Arc<[Options]> = guess::options(&calls).into();
        let found = incidents(&calls);
        let replayable = Replayable {
            calls: &calls,
            actions: &[],
            options: &options,
            incidents: &found,
            read_limit: None,
        };
        let system = settings.system("s").unwrap();
        let all = replayable.judge(system, Budget { replays: 1 << 12 });
        assert_eq!(all.bounds.proof.paths, 64);
        assert!(all.bounds.proof.exhaustive);
        let few = replayable.judge(system, Budget { replays: 3 });
        assert_eq!(few.bounds.proof.paths, 3);
        assert!(!few.bounds.proof.exhaustive);
        assert!(few.bounds.contains(&few.figures));
        // Every call let run: the failing ones let through range over all 6.
        let through = all.bounds.failing_let_through;
        assert_eq!(through.high - through.low, 6);
        assert_eq!(few.bounds.failing_let_through, through);
    }
}
