//! Replicas fill each other's gaps. The instances of one service call the same
//! upstream: a call one replica's breaker refused (no recorded outcome) is answered by
//! a call another replica ran at about the same time, with that call's outcome and
//! duration, rather than guessed.
//!
//! Each call without an outcome, in start order, takes the replicas' call that ran
//! nearest to its start, within [`WITHIN`], and not taken by an earlier one (a replica's
//! call answers one call, so a replica calling less often leaves the rest to the
//! guess). Calls a replica's own guard refused, or its caller cancelled, say nothing
//! about the upstream and answer none.

use std::time::SystemTime;

use super::recording::{Call, Recorded, Recording};

/// The farthest a replica's call may start from the call it answers (µs).
pub(crate) const WITHIN: u64 = 1_000_000;

/// Microseconds since the Unix epoch.
fn micros(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

impl Recording {
    /// Answers this recording's calls of `system` that have no outcome (a call its
    /// breaker refused) from the calls the `replicas` (other instances of the same
    /// service) ran at about the same time, with their outcomes and durations rather
    /// than guessed; returns how many were answered (none where this recording or a
    /// replica has no start time).
    pub fn fill_from_replicas(&mut self, system: &str, replicas: &[&Recording]) -> usize {
        let Some(origin) = self.origin else {
            return 0;
        };
        let theirs: Vec<Replica<'_>> = replicas
            .iter()
            .filter_map(|r| {
                Some(Replica {
                    origin: r.origin?,
                    calls: &r.systems.get(system)?.calls,
                })
            })
            .collect();
        self.systems
            .get_mut(system)
            .map_or(0, |s| fill(&mut s.calls, origin, &theirs))
    }
}

/// A replica's calls of one system, and the time its recording starts.
pub(crate) struct Replica<'a> {
    pub origin: SystemTime,
    pub calls: &'a [Call],
}

/// Answers the calls of `calls` (a recording starting at `origin`) that have no outcome
/// from the `replicas`' calls that ran; returns how many were answered.
pub(crate) fn fill(calls: &mut [Call], origin: SystemTime, replicas: &[Replica<'_>]) -> usize {
    // The replicas' calls that ran, on this recording's clock (µs since its start).
    let mut ran: Vec<(i64, Call)> = replicas
        .iter()
        .flat_map(|r| {
            let shift = micros(r.origin) - micros(origin);
            r.calls
                .iter()
                .filter(|c| !matches!(c.outcome, Recorded::Rejected | Recorded::Cancelled))
                .map(move |c| (i64::try_from(c.start).unwrap_or(i64::MAX) + shift, *c))
        })
        .collect();
    ran.sort_by_key(|(at, _)| *at);
    let within = i64::try_from(WITHIN).unwrap_or(i64::MAX);
    let mut next = 0;
    let mut filled = 0;
    for call in calls.iter_mut().filter(|c| c.outcome == Recorded::Rejected) {
        let at = i64::try_from(call.start).unwrap_or(i64::MAX);
        // Too early for this call, and so for every later one.
        while next < ran.len() && ran[next].0 < at - within {
            next += 1;
        }
        // The nearest: move on while the next one is nearer.
        while next + 1 < ran.len() && (ran[next + 1].0 - at).abs() < (ran[next].0 - at).abs() {
            next += 1;
        }
        let Some((their_start, theirs)) = ran.get(next) else {
            break;
        };
        if (their_start - at).abs() <= within {
            call.outcome = theirs.outcome;
            call.duration = theirs.duration;
            next += 1;
            filled += 1;
        }
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn call(ms: u64, outcome: Recorded) -> Call {
        Call {
            start: ms * 1000,
            duration: 7,
            outcome,
        }
    }

    #[test]
    fn each_refused_call_takes_the_nearest_call_a_replica_ran_once() {
        use Recorded::{Cancelled, Failure, Rejected, Success};
        let origin = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut calls = vec![
            call(0, Success),
            call(100, Rejected),
            call(200, Rejected),
            call(300, Rejected),
            call(5_000, Rejected),
        ];
        // The replica's recording starts 50 ms later: its 0 is our 50.
        let theirs = [
            call(40, Failure),
            call(60, Rejected),
            call(160, Success),
            call(170, Cancelled),
        ];
        let replica = Replica {
            origin: origin + Duration::from_millis(50),
            calls: &theirs,
        };
        assert_eq!(fill(&mut calls, origin, &[replica]), 2);
        let outcomes: Vec<Recorded> = calls.iter().map(|c| c.outcome).collect();
        // 100 takes their 40 (our 90), 200 their 160 (our 210); 300 finds none left
        // unused; 5 000 is beyond a second of any.
        assert_eq!(outcomes, [Success, Failure, Success, Rejected, Rejected]);
        assert_eq!(calls[1].duration, 7);
    }
}
