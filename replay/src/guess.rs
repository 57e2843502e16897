//! Answers for the calls a recording has no outcome of: those its own breaker or
//! bulkhead refused (`rejected`). A replay whose guard lets such a call run must answer
//! it somehow, and whatever it answers is a guess.
//!
//! Each such call can be answered two ways ([`Options`]): succeeding, after the mean
//! duration of the successes near its gap, or failing as most failing calls near it
//! did. The estimate, the figure shown, picks one for each: each gap (a run of refused
//! calls between two calls that ran) is answered from the evidence on both sides of
//! it — the share of failing calls among the last calls that ran before it (what
//! opened the breaker) and among the first that ran after it (its trials, and what
//! followed), the share moving from one to the other across the gap, the failures
//! spread evenly. The ranges hold every way ([`ways`](super::ways)).

use super::recording::{Call, Recorded};

/// How many calls that ran, on each side of a gap, make its evidence.
pub(crate) const EVIDENCE: usize = 10;

/// The calls that ran near a gap: how many failed, and their typical durations.
#[derive(Debug, Default, Clone, Copy)]
struct Evidence {
    ran: u32,
    failing: u32,
    /// Of the failing ones, how many were timeouts (no answer at all).
    timeouts: u32,
    /// Of the failing ones, how many the client's `read_timeout` cut.
    cuts: u32,
    success_micros: u64,
    failing_micros: u64,
}

impl Evidence {
    fn add(&mut self, call: &Call) {
        self.ran += 1;
        if call.outcome.failing() {
            self.failing += 1;
            self.failing_micros += u64::from(call.duration);
            if call.outcome == Recorded::Timeout {
                self.timeouts += 1;
            }
            if call.outcome == Recorded::Cut {
                self.cuts += 1;
            }
        } else {
            self.success_micros += u64::from(call.duration);
        }
    }

    fn join(self, other: Evidence) -> Evidence {
        Evidence {
            ran: self.ran + other.ran,
            failing: self.failing + other.failing,
            timeouts: self.timeouts + other.timeouts,
            cuts: self.cuts + other.cuts,
            success_micros: self.success_micros + other.success_micros,
            failing_micros: self.failing_micros + other.failing_micros,
        }
    }

    /// The share that failed, or `None` without a call.
    fn share(&self) -> Option<f64> {
        (self.ran > 0).then(|| f64::from(self.failing) / f64::from(self.ran))
    }

    /// A failing answer: cut by the client's `read_timeout`, or a timeout, if most
    /// failing calls here were, else a failure, of
    /// their mean duration.
    fn failing_answer(&self) -> (Recorded, u32) {
        let failing = self.failing.max(1);
        let outcome = if self.cuts * 2 > self.failing {
            Recorded::Cut
        } else if self.timeouts * 2 > self.failing {
            Recorded::Timeout
        } else {
            Recorded::Failure
        };
        (outcome, mean(self.failing_micros, failing))
    }

    /// A successful answer, of the mean duration of the successes here.
    fn success_answer(&self) -> (Recorded, u32) {
        let succeeded = (self.ran - self.failing).max(1);
        (Recorded::Success, mean(self.success_micros, succeeded))
    }
}

fn mean(total: u64, count: u32) -> u32 {
    u32::try_from(total / u64::from(count.max(1))).unwrap_or(u32::MAX)
}

/// Whether a call has no recorded outcome.
pub(crate) fn unknown(call: &Call) -> bool {
    call.outcome == Recorded::Rejected
}

/// The two ways a call without a recorded outcome can be answered, and the one the
/// estimate picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    /// Succeeding, after the mean duration of the successes near its gap.
    pub success: (Recorded, u32),
    /// Failing as most failing calls near its gap did (a failure, a timeout or cut by
    /// the client), after their mean duration.
    pub failing: (Recorded, u32),
    /// Whether the estimate answers it failing.
    pub estimate_fails: bool,
    /// Its gap's number (0 for the first): the run of refused calls it is one of.
    pub gap: u32,
}

impl Options {
    /// Its answer, failing or not.
    pub(crate) fn answer(&self, failing: bool) -> (Recorded, u32) {
        if failing {
            self.failing
        } else {
            self.success
        }
    }
}

/// A gap: a run of calls without a recorded outcome, and the evidence on each side.
struct Gap {
    calls: std::ops::Range<usize>,
    before: Evidence,
    after: Evidence,
}

impl Gap {
    /// The share failing the evidence gives at the start of the gap and at its end.
    fn shares(&self) -> (f64, f64) {
        let from = self.before.share().or(self.after.share()).unwrap_or(0.0);
        let to = self.after.share().or(self.before.share()).unwrap_or(0.0);
        (from, to)
    }

    /// The share at the `k`-th of its calls, moving from `from` to `to` across it.
    fn along(&self, (from, to): (f64, f64), k: usize) -> f64 {
        let x = (k as f64 + 0.5) / self.calls.len() as f64;
        from + (to - from) * x
    }
}

/// The gaps of `calls`, in order.
fn gaps(calls: &[Call]) -> Vec<Gap> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < calls.len() {
        if !unknown(&calls[i]) {
            i += 1;
            continue;
        }
        let gap_start = i;
        while i < calls.len() && unknown(&calls[i]) {
            i += 1;
        }
        let mut before = Evidence::default();
        for call in calls[..gap_start]
            .iter()
            .rev()
            .filter(|c| !unknown(c))
            .take(EVIDENCE)
        {
            before.add(call);
        }
        let mut after = Evidence::default();
        for call in calls[i..].iter().filter(|c| !unknown(c)).take(EVIDENCE) {
            after.add(call);
        }
        out.push(Gap {
            calls: gap_start..i,
            before,
            after,
        });
    }
    out
}

/// The options of each call without a recorded outcome, in the order of `calls`.
pub(crate) fn options(calls: &[Call]) -> Vec<Options> {
    let mut out = Vec::new();
    for (number, gap) in gaps(calls).iter().enumerate() {
        let both = gap.before.join(gap.after);
        let (success, failing) = (both.success_answer(), both.failing_answer());
        let shares = gap.shares();
        // Error diffusion: the failures spread evenly, their count the share's.
        let mut owed = 0.0;
        for k in 0..gap.calls.len() {
            owed += gap.along(shares, k);
            let estimate_fails = owed >= 0.5;
            if estimate_fails {
                owed -= 1.0;
            }
            out.push(Options {
                success,
                failing,
                estimate_fails,
                gap: u32::try_from(number).unwrap_or(u32::MAX),
            });
        }
    }
    out
}

/// A share drawn as the evidence's share of a resample of it (as many calls, drawn
/// with replacement): near the share seen, farther from it the fewer the calls.
fn resampled(rng: &mut fastrand::Rng, evidence: &Evidence) -> Option<f64> {
    let share = evidence.share()?;
    let failing = (0..evidence.ran).filter(|_| rng.f64() < share).count();
    Some(failing as f64 / f64::from(evidence.ran))
}

/// How many calls that ran first after a gap are its trials: they ran whatever they
/// answered (the breaker that refused the gap let them through on the clock), so what
/// they say of the upstream is not selected by its decision.
pub(crate) const TRIALS: usize = 3;

/// How many gaps on each side of a gap lend it their trials.
pub(crate) const POOLED: usize = 3;

/// How far from a gap (µs) another gap's trials may lie and still be lent.
pub(crate) const NEAR: u64 = 30_000_000;

/// How many calls that ran between two gaps set them apart: more than the two gaps'
/// own evidence ([`EVIDENCE`] on each side) holds. The breaker closed between them
/// and the upstream was seen on its own, with nothing refused: another incident may
/// have begun, so neither lends the other its trials (a burst's healthy trials say
/// nothing of a hang 20 s later, nor the hang's of the burst's end).
pub(crate) const APART: usize = 2 * EVIDENCE;

/// The first [`TRIALS`] calls that ran after `gap`.
fn trials(calls: &[Call], gap: &Gap) -> Evidence {
    let mut out = Evidence::default();
    for call in calls[gap.calls.end..]
        .iter()
        .filter(|c| !unknown(c))
        .take(TRIALS)
    {
        out.add(call);
    }
    out
}

/// The evidence of each gap's two ends for the draws. At its start: the calls that
/// ran just before it (what opened the breaker: selected by that decision, but the
/// only evidence of a change that has just begun), with the trials of the gaps before
/// it within [`NEAR`] (up to [`POOLED`]). At its end: the calls that ran just after it,
/// with its own trials once more and those of the gaps after it within [`NEAR`]
/// (trials are what the breaker did not select; a gap's own weigh double). Only gaps
/// of one stretch of refusals lend trials: fewer than [`APART`] calls ran between.
fn evidence(calls: &[Call], gaps: &[Gap]) -> Vec<(Evidence, Evidence)> {
    let trials: Vec<Evidence> = gaps.iter().map(|g| trials(calls, g)).collect();
    let at = |i: usize| calls.get(i).map_or(u64::MAX, |c| c.start);
    // How many calls ran before the i-th: between two gaps, what the upstream said
    // with nothing refused.
    let ran: Vec<usize> = std::iter::once(0)
        .chain(calls.iter().scan(0, |n, c| {
            *n += usize::from(!unknown(c));
            Some(*n)
        }))
        .collect();
    // Two gaps of one stretch of refusals: fewer calls than [`APART`] ran between them.
    let joined = |a: &Gap, b: &Gap| ran[b.calls.start] - ran[a.calls.end] < APART;
    gaps.iter()
        .enumerate()
        .map(|(g, gap)| {
            let (start, end) = (at(gap.calls.start), at(gap.calls.end - 1));
            let mut before = gap.before;
            for j in g.saturating_sub(POOLED)..g {
                if start.saturating_sub(at(gaps[j].calls.end)) <= NEAR && joined(&gaps[j], gap) {
                    before = before.join(trials[j]);
                }
            }
            let mut after = gap.after.join(trials[g]);
            for (j, other) in gaps.iter().enumerate().skip(g + 1).take(POOLED - 1) {
                if at(other.calls.start).saturating_sub(end) <= NEAR && joined(gap, other) {
                    after = after.join(trials[j]);
                }
            }
            (before, after)
        })
        .collect()
}

/// `n` draws of the answers of the calls without a recorded outcome (each: failing or
/// not, in the order of `calls`), from `seed`. The upstream's share failing at each
/// end of a gap is drawn from a resample of its evidence ([`evidence`]: the
/// trials, which the breaker's decision did not select, beside the calls that ran
/// nearest); across the gap it moves from one to the
/// other, and each call fails at random at the share at its place. Unlike the
/// estimate's, the failures are not spread evenly: each draw is one way the upstream
/// may have answered, and the spread of the draws is the estimate's doubt.
pub(crate) fn draws(calls: &[Call], n: usize, seed: u64) -> Vec<Vec<bool>> {
    let gaps = gaps(calls);
    let evidence = evidence(calls, &gaps);
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            let mut each = Vec::new();
            for (gap, (before, after)) in gaps.iter().zip(&evidence) {
                let (from, to) = (resampled(&mut rng, before), resampled(&mut rng, after));
                let shares = (from.or(to).unwrap_or(0.0), to.or(from).unwrap_or(0.0));
                each.extend((0..gap.calls.len()).map(|k| rng.f64() < gap.along(shares, k)));
            }
            each
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How the calls without a recorded outcome are answered.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Guess {
        /// From the evidence on both sides of each gap.
        Estimate,
        /// Every one a success.
        AllSucceed,
        /// Every one a failure.
        AllFail,
    }

    /// The answer of each call without a recorded outcome, in the order of `calls`.
    fn answers(calls: &[Call], guess: Guess) -> Vec<(Recorded, u32)> {
        options(calls)
            .iter()
            .map(|o| match guess {
                Guess::Estimate => o.answer(o.estimate_fails),
                Guess::AllSucceed => o.success,
                Guess::AllFail => o.failing,
            })
            .collect()
    }

    fn call(outcome: Recorded) -> Call {
        Call {
            start: 0,
            duration: if outcome.failing() { 1_000_000 } else { 20_000 },
            outcome,
        }
    }

    fn failures(answers: &[(Recorded, u32)]) -> usize {
        answers.iter().filter(|(o, _)| o.failing()).count()
    }

    #[test]
    fn a_gap_is_answered_from_both_sides_not_the_last_call() {
        use Recorded::{Failure, Rejected, Success};
        // 4 of 10 failed before the gap, the last one included; 4 of 10 after it.
        let mut calls: Vec<Call> = [
            Success, Failure, Success, Success, Failure, Success, Failure, Success, Success,
            Failure,
        ]
        .iter()
        .map(|o| call(*o))
        .collect();
        calls.extend((0..100).map(|_| call(Rejected)));
        calls.extend(
            [
                Failure, Success, Success, Failure, Success, Success, Failure, Success, Success,
                Failure,
            ]
            .iter()
            .map(|o| call(*o)),
        );
        let estimate = answers(&calls, Guess::Estimate);
        assert_eq!(estimate.len(), 100);
        assert_eq!(failures(&estimate), 40);
        // Spread evenly: never two failures in a row at 40%.
        assert!(estimate
            .windows(2)
            .all(|w| !(w[0].0.failing() && w[1].0.failing())));
        assert_eq!(estimate[0].1, 20_000);
        assert_eq!(failures(&answers(&calls, Guess::AllFail)), 100);
        assert_eq!(failures(&answers(&calls, Guess::AllSucceed)), 0);
    }

    #[test]
    fn draws_vary_around_the_evidence_and_a_hang_s_draws_all_fail() {
        use Recorded::{Failure, Rejected, Success, Timeout};
        // 4 of 10 failing on each side of a gap of 200.
        let side = [
            Success, Failure, Success, Success, Failure, Success, Failure, Success, Success,
            Failure,
        ];
        let mut calls: Vec<Call> = side.iter().map(|o| call(*o)).collect();
        calls.extend((0..200).map(|_| call(Rejected)));
        calls.extend(side.iter().map(|o| call(*o)));
        let draws = draws(&calls, 19, 1);
        assert_eq!(draws.len(), 19);
        assert!(draws.iter().all(|d| d.len() == 200));
        let failing: Vec<usize> = draws
            .iter()
            .map(|d| d.iter().filter(|f| **f).count())
            .collect();
        // Around 80 each, never the same every draw, never spread evenly.
        assert!(
            failing.iter().all(|n| (20..=160).contains(n)),
            "{failing:?}"
        );
        assert!(failing.iter().any(|n| *n != failing[0]), "{failing:?}");
        let mean = failing.iter().sum::<usize>() as f64 / 19.0;
        assert!((50.0..110.0).contains(&mean), "{mean}");
        // The same seed draws the same.
        assert_eq!(super::draws(&calls, 19, 1), draws);
        // Every call around a hang's gap timed out: every draw answers it failing.
        let mut hung: Vec<Call> = (0..10).map(|_| call(Timeout)).collect();
        hung.extend((0..50).map(|_| call(Rejected)));
        hung.extend((0..3).map(|_| call(Timeout)));
        assert!(super::draws(&hung, 19, 1).iter().flatten().all(|f| *f));
    }

    #[test]
    fn a_burst_and_a_later_hang_lend_each_other_no_trials() {
        use Recorded::{Failure, Rejected, Success, Timeout};
        // A burst's gap, closed by healthy trials; 15 s of healthy calls.
        let mut burst: Vec<Call> = (0..10).map(|_| call(Failure)).collect();
        burst.extend((0..50).map(|_| call(Rejected)));
        burst.extend((0..750).map(|_| call(Success)));
        for (i, c) in burst.iter_mut().enumerate() {
            c.start = i as u64 * 20_000;
        }
        // Then a hang: timeouts, and gaps whose trials time out, within 30 s of the burst.
        let mut both = burst.clone();
        for round in 0..3 {
            both.extend((0..if round == 0 { 10 } else { 3 }).map(|_| call(Timeout)));
            both.extend((0..50).map(|_| call(Rejected)));
        }
        both.extend((0..3).map(|_| call(Timeout)));
        let from = burst.len();
        for (i, c) in both.iter_mut().enumerate().skip(from) {
            c.start = i as u64 * 20_000;
        }
        for seed in 0..20 {
            let (alone, with) = (draws(&burst, 1, seed), draws(&both, 1, seed));
            // The burst's gap is drawn as if no hang followed it...
            assert_eq!(alone[0][..50], with[0][..50], "seed {seed}");
            // ...and the hang's gaps, every answer failing, as if no burst came before.
            assert!(with[0][50..].iter().all(|f| *f), "seed {seed}");
        }
    }

    #[test]
    fn a_hang_whose_trials_fail_is_answered_failing_and_a_recovery_moves_across() {
        use Recorded::{Rejected, Success, Timeout};
        let mut calls: Vec<Call> = (0..10).map(|_| call(Timeout)).collect();
        calls.extend((0..10).map(|_| call(Rejected)));
        calls.push(call(Timeout));
        let hung = answers(&calls, Guess::Estimate);
        assert!(hung.iter().all(|(o, _)| *o == Timeout), "{hung:?}");
        // Before: all timed out; after: all succeeded: half and half, failing first.
        calls.truncate(20);
        calls.extend((0..10).map(|_| call(Success)));
        let recovering = answers(&calls, Guess::Estimate);
        assert_eq!(failures(&recovering), 5, "{recovering:?}");
        assert!(recovering[0].0.failing() && !recovering[9].0.failing());
    }
}
