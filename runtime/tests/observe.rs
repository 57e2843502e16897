//! Observe mode (`cb_mode = "observe"`): every call is admitted and runs; the breaker
//! counts, judges and moves through its states as in `auto`, refusing nothing, and says
//! what it would have done. Every test runs on tokio's paused clock.

use outbound_guard::Verdict;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbound_guard::{
    Breaker, Guard, Guards, HealthStatus, ManualAction, Observer, Settings, State, Transition,
};
use tokio::time::advance;

mod common;
use common::{system, without_log, MS, S};

/// Two outcomes judge; one failure in two opens; open for a second; one trial.
const SMALL: &str = "cb_window_size = 2\ncb_min_calls = 2\ncb_failure_rate = 0.5\n\
                     cb_open_duration = \"1s\"\ncb_half_open_calls = 1";

/// Every transition's line, and whether it was observed.
#[derive(Default)]
struct Lines(Mutex<Vec<(String, bool)>>);

impl Observer for Lines {
    fn on_transition(&self, t: &Transition<'_>) {
        self.0.lock().unwrap().push((t.to_string(), t.observing));
    }
}

impl Lines {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
            .into_iter()
            .map(|(line, _)| line)
            .collect()
    }
}

fn observed(mode: &str) -> (Guard, Arc<Lines>) {
    let lines = Arc::new(Lines::default());
    let settings = system(&format!("{SMALL}\ncb_mode = \"{mode}\""));
    let guard = Guard::builder(&settings).observer(lines.clone()).build();
    guard.breaker().seed_jitter(1);
    (guard, lines)
}

/// A guarded call that counts the upstream's calls and ends with `ok`: whether the
/// guard let it run.
async fn call(guard: &Guard, ran: &AtomicUsize, ok: bool) -> bool {
    let answer = guard
        .call(async {
            ran.fetch_add(1, Ordering::SeqCst);
            if ok {
                Ok(())
            } else {
                Err("boom")
            }
        })
        .await;
    answer.is_ok()
}

#[tokio::test(start_paused = true)]
async fn an_observing_breaker_opens_and_closes_as_in_auto_but_every_call_runs() {
    let (guard, lines) = observed("observe");
    let ran = AtomicUsize::new(0);
    assert!(guard.breaker().peek().observing);
    assert!(call(&guard, &ran, false).await);
    assert!(call(&guard, &ran, false).await);
    assert_eq!(guard.breaker().state(), State::Open, "it would be open");
    assert_eq!(
        lines.take(),
        ["sber would have opened: 2 of 2 calls failed (100% ≥ 50%)"]
    );

    // Open: admitted and run, counted nowhere (a success would close nothing).
    for ok in [true, false, true] {
        assert!(
            call(&guard, &ran, ok).await,
            "an open breaker refuses nothing"
        );
    }
    assert_eq!(ran.load(Ordering::SeqCst), 5);
    let health = guard.health();
    assert_eq!(health.snapshot.state, State::Open);
    assert!(health.snapshot.observing);
    assert_eq!(health.snapshot.would_have_refused, 3);
    assert_eq!(
        health.status,
        HealthStatus::Degraded,
        "refusing nothing: not down"
    );
    assert!(
        lines.take().is_empty(),
        "the open period's calls moved nothing"
    );

    // After the open period: the first call is the trial; while it runs, another one
    // finds every trial taken and runs all the same, uncounted.
    advance(S).await;
    let (trial_ends, trial_end) = tokio::sync::oneshot::channel::<()>();
    let trial = guard.call(async {
        let _ = trial_end.await;
        Ok::<_, &str>(())
    });
    tokio::pin!(trial);
    assert!(futures_poll_once(trial.as_mut()).await.is_none());
    assert_eq!(guard.breaker().state(), State::HalfOpen);
    assert!(call(&guard, &ran, false).await, "half-open and full: runs");
    assert_eq!(
        guard.breaker().state(),
        State::HalfOpen,
        "its failure counts nowhere"
    );
    assert_eq!(guard.breaker().snapshot().would_have_refused, 4);
    trial_ends.send(()).unwrap();
    assert!(trial.await.is_ok());
    assert_eq!(guard.breaker().state(), State::Closed);
    assert_eq!(
        lines.take(),
        [
            "sber would be half-open after 1s",
            "sber would have closed: 1/1 trials succeeded"
        ]
    );
}

/// Polls `future` once: its output if it was ready.
async fn futures_poll_once<F: std::future::Future + Unpin>(mut future: F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
            std::task::Poll::Ready(out) => Some(out),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

/// The same upstream, called at the same times, through an enforcing and an observing
/// breaker: the observing one makes the same transitions at the same instants (its
/// lines say "would have"), and runs the calls the enforcing one refused.
#[tokio::test(start_paused = true)]
async fn observing_makes_the_transitions_enforcing_makes_at_the_same_instants() {
    let (auto, auto_lines) = observed("auto");
    let (observe, observe_lines) = observed("observe");
    let (auto_ran, observe_ran) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut refused = 0;
    // An upstream that fails in runs: 20 ms apart, 400 calls, failing for 1.4 s in 2.8.
    for i in 0..400_u32 {
        let ok = (i / 70) % 2 == 0 || i % 5 == 0;
        if !call(&auto, &auto_ran, ok).await {
            refused += 1;
        }
        assert!(call(&observe, &observe_ran, ok).await, "call {i} refused");
        advance(20 * MS).await;
    }
    let (auto_lines, observe_lines): (Vec<_>, Vec<_>) = (
        auto_lines.0.lock().unwrap().clone(),
        observe_lines.0.lock().unwrap().clone(),
    );
    assert!(auto_lines.len() >= 6, "{auto_lines:?}");
    assert!(refused > 100, "{refused}");
    assert_eq!(observe_ran.load(Ordering::SeqCst), 400);
    assert_eq!(auto_ran.load(Ordering::SeqCst), 400 - refused);
    assert_eq!(
        observe.breaker().snapshot().would_have_refused,
        refused as u64
    );
    let would: Vec<String> = auto_lines
        .iter()
        .map(|(line, observing)| {
            assert!(!observing);
            line.replace("sber opened", "sber would have opened")
                .replace("sber half-open", "sber would be half-open")
                .replace("sber closed", "sber would have closed")
        })
        .collect();
    assert!(observe_lines.iter().all(|(_, observing)| *observing));
    let observe_lines: Vec<String> = observe_lines.into_iter().map(|(line, _)| line).collect();
    assert_eq!(observe_lines, would);
}

/// An operator's force open is obeyed in observe mode; observe mode turned off (by a
/// reload to `auto`) enforces the state the breaker is in; turned on by a reload, an
/// open breaker lets calls through at once.
#[tokio::test(start_paused = true)]
async fn a_reload_and_an_operator_turn_observe_mode_on_and_off() {
    let settings = |mode: &str| {
        Settings::parse(
            &format!("[systems.sber]\n{SMALL}\ncb_mode = \"{mode}\"\n"),
            "resilience.toml",
        )
        .unwrap()
    };
    let started = settings("observe");
    let guards = without_log(Guards::builder(&started)).build();
    let sber = guards.get("sber").unwrap();
    let ran = AtomicUsize::new(0);
    assert!(call(&sber, &ran, false).await);
    assert!(call(&sber, &ran, false).await);
    assert!(call(&sber, &ran, true).await, "observing: admitted");

    guards.reload(&settings("auto")).unwrap();
    assert!(!sber.breaker().peek().observing);
    assert_eq!(sber.breaker().state(), State::Open, "the state is kept");
    assert!(!call(&sber, &ran, true).await, "enforced now: refused");

    guards.reload(&settings("observe")).unwrap();
    assert!(call(&sber, &ran, true).await, "observing again: admitted");

    guards
        .manual("sber", outbound_guard::ManualAction::ForceOpen)
        .unwrap();
    assert!(
        !call(&sber, &ran, true).await,
        "forced open refuses, observing or not"
    );
    guards
        .manual("sber", outbound_guard::ManualAction::Reset)
        .unwrap();
    let health = guards.manual("sber", ManualAction::Enforce).unwrap();
    assert!(!health.snapshot.observing);
    assert!(guards.manual("nobody", ManualAction::Observe).is_err());

    // From the file's forced open to observe: the file's own state is undone.
    guards.reload(&settings("forced_open")).unwrap();
    assert_eq!(sber.breaker().state(), State::ForcedOpen);
    guards.reload(&settings("observe")).unwrap();
    assert_eq!(sber.breaker().state(), State::Closed);
    assert!(sber.breaker().peek().observing);
    assert_eq!(ran.load(Ordering::SeqCst), 4);
}

/// A lone breaker in observe mode hands out permits where it would refuse, and their
/// outcomes (a retry hint too) move nothing.
#[tokio::test(start_paused = true)]
async fn an_observing_breakers_uncounted_permits_move_nothing() {
    let breaker = Breaker::new(&system(SMALL));
    assert!(breaker.act(ManualAction::Observe));
    assert!(!breaker.act(ManualAction::Observe), "already observing");
    breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    breaker.try_acquire().unwrap().finish(Verdict::FAILURE);
    let until = breaker.snapshot().retry_after.unwrap();
    breaker
        .try_acquire()
        .expect("observing: admitted")
        .finish(Verdict::FAILURE.retry_after(Some(Duration::from_secs(60))));
    assert_eq!(
        breaker.snapshot().retry_after.unwrap(),
        until,
        "no hint taken"
    );
    breaker.try_acquire().unwrap().finish(Verdict::SUCCESS);
    assert_eq!(breaker.state(), State::Open);
    assert!(breaker.act(ManualAction::Enforce));
    assert!(breaker.try_acquire().is_err(), "enforced: refused");
}
