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
    pub(crate) success: (Recorded, u32),
    /// Failing as most failing calls near its gap did (a failure, a timeout or cut by
    /// the client), after their mean duration.
    pub(crate) failing: (Recorded, u32),
    /// Whether the estimate answers it failing.
    pub(crate) estimate_fails: bool,
    /// Its gap's number (0 for the first): the run of refused calls it is one of.
    pub(crate) gap: u32,
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

/// The options of each call without a recorded outcome, in the order of `calls`.
pub(crate) fn options(calls: &[Call]) -> Vec<Options> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut gaps = 0;
    while i < calls.len() {
        if !unknown(&calls[i]) {
            i += 1;
            continue;
        }
        gaps += 1;
        let gap_start = i;
        while i < calls.len() && unknown(&calls[i]) {
            i += 1;
        }
        let gap = gap_start..i;
        let mut before = Evidence::default();
        for call in calls[..gap.start]
            .iter()
            .rev()
            .filter(|c| !unknown(c))
            .take(EVIDENCE)
        {
            before.add(call);
        }
        let mut after = Evidence::default();
        for call in calls[gap.end..]
            .iter()
            .filter(|c| !unknown(c))
            .take(EVIDENCE)
        {
            after.add(call);
        }
        let both = before.join(after);
        let (success, failing) = (both.success_answer(), both.failing_answer());
        let from = before.share().or(after.share()).unwrap_or(0.0);
        let to = after.share().or(before.share()).unwrap_or(0.0);
        let len = gap.len() as f64;
        // Error diffusion: the failures spread evenly, their count the share's.
        let mut owed = 0.0;
        for (k, _) in gap.enumerate() {
            let x = (k as f64 + 0.5) / len;
            owed += from + (to - from) * x;
            let estimate_fails = owed >= 0.5;
            if estimate_fails {
                owed -= 1.0;
            }
            out.push(Options {
                success,
                failing,
                estimate_fails,
                gap: gaps - 1,
            });
        }
    }
    out
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
