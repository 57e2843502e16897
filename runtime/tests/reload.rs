//! `Guards::reload`: new settings while calls run, keeping what the breaker knows (its
//! state and open period, the window's newest outcomes, trials in progress) and every
//! permit in use; refused whole when the file is invalid or changes the set of systems.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use outbound_guard::{Guards, ManualAction, ReloadError, Settings, State};

mod common;
use common::{counts, hold, without_log, S};

fn settings(sber: &str) -> Settings {
    Settings::parse(
        &format!(
            "[systems.sber]\nread_timeout = 100\ntotal_timeout = 120\n{sber}\n[systems.customer]\n"
        ),
        "inline",
    )
    .unwrap()
}

fn guards(sber: &str) -> Guards {
    without_log(Guards::builder(&settings(sber))).build()
}

async fn fail(guards: &Guards) {
    let sber = guards.get("sber").unwrap();
    let _ = sber.call(async { Err::<(), _>(()) }).await;
}

async fn succeed(guards: &Guards) {
    let sber = guards.get("sber").unwrap();
    let _ = sber.call(async { Ok::<_, ()>(()) }).await;
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_stays_open_for_the_rest_of_its_period() {
    let guards = guards("cb_window_size = 4\ncb_min_calls = 2\ncb_open_duration = 30");
    fail(&guards).await;
    fail(&guards).await;
    let sber = guards.get("sber").unwrap();
    assert_eq!(sber.breaker().state(), State::Open);
    tokio::time::advance(10 * S).await;
    let before = sber.breaker().snapshot();
    let reloaded = guards
        .reload(&settings(
            "cb_window_size = 8\ncb_min_calls = 4\ncb_open_duration = 5",
        ))
        .unwrap();
    assert_eq!(reloaded.changed, ["sber"]);
    let after = sber.breaker().snapshot();
    assert_eq!(after.state, State::Open);
    assert_eq!(after.since, before.since, "the same open period");
    assert_eq!(
        after.retry_after,
        Some(20 * S),
        "it ends when it was going to"
    );
    assert_eq!(
        (after.failures, after.calls),
        (2, 2),
        "the figures that opened it"
    );
    assert_eq!(sber.settings().cb_open_duration(), 5 * S);
}

#[tokio::test(start_paused = true)]
async fn a_smaller_window_keeps_the_newest_outcomes() {
    // Never opens: 100% failures needed over 10 calls.
    let guards = guards("cb_window_size = 10\ncb_min_calls = 10\ncb_failure_rate = 1.0");
    for _ in 0..3 {
        fail(&guards).await;
    }
    for _ in 0..5 {
        succeed(&guards).await;
    }
    let sber = guards.get("sber").unwrap();
    assert_eq!(counts(sber.breaker()), (State::Closed, 3, 8));
    guards
        .reload(&settings(
            "cb_window_size = 6\ncb_min_calls = 6\ncb_failure_rate = 1.0",
        ))
        .unwrap();
    // The newest six: one failure, five successes.
    assert_eq!(counts(sber.breaker()), (State::Closed, 1, 6));
    guards
        .reload(&settings(
            "cb_window_size = 5\ncb_min_calls = 5\ncb_failure_rate = 1.0",
        ))
        .unwrap();
    assert_eq!(counts(sber.breaker()), (State::Closed, 0, 5));
}

#[tokio::test(start_paused = true)]
async fn new_thresholds_apply_from_the_next_outcome() {
    let guards = guards("cb_window_size = 10\ncb_min_calls = 4\ncb_failure_rate = 0.5");
    fail(&guards).await;
    succeed(&guards).await;
    succeed(&guards).await;
    succeed(&guards).await;
    let sber = guards.get("sber").unwrap();
    assert_eq!(counts(sber.breaker()), (State::Closed, 1, 4));
    // 25% of 4 would now open it: nothing happens until the next outcome...
    guards
        .reload(&settings(
            "cb_window_size = 10\ncb_min_calls = 4\ncb_failure_rate = 0.25",
        ))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::Closed);
    // ...which is judged by the new rate: 2 of 5 = 40% ≥ 25%.
    fail(&guards).await;
    assert_eq!(counts(sber.breaker()).0, State::Open);
}

#[tokio::test(start_paused = true)]
async fn trials_in_progress_survive_a_reload() {
    let guards = guards(
        "cb_window_size = 2\ncb_min_calls = 2\ncb_open_duration = 1\ncb_half_open_calls = 3",
    );
    fail(&guards).await;
    fail(&guards).await;
    tokio::time::advance(S).await;
    let sber = guards.get("sber").unwrap();
    let trial = hold(&sber).await.unwrap();
    assert_eq!(sber.breaker().state(), State::HalfOpen);
    // Fewer trials needed now: the one in progress is the last one needed.
    guards
        .reload(&settings(
            "cb_window_size = 2\ncb_min_calls = 2\ncb_open_duration = 1\ncb_half_open_calls = 1",
        ))
        .unwrap();
    assert_eq!(sber.breaker().snapshot().trials.admitted, 1);
    trial.finish(Ok(())).await.unwrap().unwrap();
    assert_eq!(sber.breaker().state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_shrunk_below_its_calls_in_flight_revokes_none() {
    let guards = guards("max_connections = 10\nbulkhead_wait = 0");
    let sber = guards.get("sber").unwrap();
    assert_eq!(sber.bulkhead_permits(), 8);
    let mut held = Vec::new();
    for _ in 0..6 {
        held.push(hold(&sber).await.unwrap());
    }
    guards
        .reload(&settings("max_connections = 2\nbulkhead_wait = 0"))
        .unwrap();
    assert_eq!(sber.bulkhead_permits(), 1);
    assert_eq!(sber.in_flight(), 6, "every call keeps its permit");
    assert!(hold(&sber).await.is_err(), "full: six in use of one");
    for call in held.drain(..5) {
        call.finish(Ok(())).await.unwrap().unwrap();
    }
    assert_eq!(sber.in_flight(), 1);
    assert!(hold(&sber).await.is_err(), "one in use of one");
    held.pop().unwrap().finish(Ok(())).await.unwrap().unwrap();
    assert_eq!(sber.in_flight(), 0);
    let one = hold(&sber).await.unwrap();
    assert!(hold(&sber).await.is_err(), "one permit now");
    drop(one);
    // And it grows back.
    guards
        .reload(&settings("max_connections = 5\nbulkhead_wait = 0"))
        .unwrap();
    let mut again = Vec::new();
    for _ in 0..4 {
        again.push(hold(&sber).await.unwrap());
    }
    assert!(hold(&sber).await.is_err());
}

#[tokio::test]
async fn a_reload_adding_or_removing_a_system_is_refused_and_changes_nothing() {
    let guards = guards("cb_open_duration = 30");
    let more = Settings::parse(
        "[systems.sber]\ncb_open_duration = 5\n[systems.customer]\n[systems.ledger]\n",
        "next.toml",
    )
    .unwrap();
    let err = guards.reload(&more).unwrap_err();
    assert!(matches!(err, ReloadError::Systems { .. }));
    assert_eq!(
        err.to_string(),
        "next.toml: a reload cannot change the set of systems (fixed by the code that calls them): it adds `ledger`; nothing was changed, the running settings stay in effect"
    );
    let fewer = Settings::parse("[systems.sber]\ncb_open_duration = 5\n", "next.toml").unwrap();
    let err = guards.reload(&fewer).unwrap_err();
    assert!(err.to_string().contains("it removes `customer`"), "{err}");
    let sber = guards.get("sber").unwrap();
    assert_eq!(sber.settings().cb_open_duration(), 30 * S);
}

#[tokio::test]
async fn an_invalid_file_changes_nothing_and_its_error_is_the_one_startup_gives() {
    let dir = std::env::temp_dir().join(format!("og-reload-invalid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resilience.toml");
    std::fs::write(
        &path,
        "[systems.sber]\ncb_failure_rate = 1.5\n[systems.customer]\n",
    )
    .unwrap();
    let guards = guards("cb_failure_rate = 0.3");
    let err = guards.reload_file(&path).unwrap_err();
    let startup = outbound_guard::settings::Loader::new()
        .read(&path)
        .unwrap_err();
    assert_eq!(err, ReloadError::Invalid(startup.clone()));
    assert_eq!(err.to_string(), startup.to_string());
    assert!(err.to_string().contains("cb_failure_rate"), "{err}");
    assert_eq!(
        guards.get("sber").unwrap().settings().cb_failure_rate(),
        0.3
    );
    // A missing file too, naming it.
    let missing = dir.join("nowhere.toml");
    let err = guards.reload_file(&missing).unwrap_err();
    assert!(err.to_string().contains("nowhere.toml"), "{err}");
    // And a valid one is applied.
    std::fs::write(
        &path,
        "[systems.sber]\ncb_failure_rate = 0.4\n[systems.customer]\n",
    )
    .unwrap();
    guards.reload_file(&path).unwrap();
    assert_eq!(
        guards.get("sber").unwrap().settings().cb_failure_rate(),
        0.4
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Calls on four threads while another reloads between two bulkhead sizes and window
/// sizes as fast as it can: no permit is lost or made up, every call's outcome is
/// counted once, and the window never holds more than its size.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reload_storm_under_load_loses_no_permit_and_no_outcome() {
    let small = "max_connections = 3\nbulkhead_wait = \"50ms\"\ncb_window_size = 5\ncb_min_calls = 5\ncb_failure_rate = 1.0";
    let large = "max_connections = 20\nbulkhead_wait = \"50ms\"\ncb_window_size = 100\ncb_min_calls = 100\ncb_failure_rate = 1.0";
    let guards = guards(large);
    let sber = guards.get("sber").unwrap();
    let done = Arc::new(AtomicU64::new(0));
    let admitted = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let callers: Vec<_> = (0..32u64)
        .map(|i| {
            let (sber, done, admitted, refused) = (
                sber.clone(),
                done.clone(),
                admitted.clone(),
                refused.clone(),
            );
            tokio::spawn(async move {
                for n in 0..200u64 {
                    let admitted = &admitted;
                    let result = sber
                        .call(async move {
                            admitted.fetch_add(1, Ordering::Relaxed);
                            if (i + n) % 3 == 0 {
                                tokio::task::yield_now().await;
                            }
                            if (i + n) % 5 == 0 {
                                Err(())
                            } else {
                                Ok(())
                            }
                        })
                        .await;
                    if result.is_err() {
                        // The breaker (a window of 5 may fill with failures) or the bulkhead.
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let reloader = {
        let guards = guards.clone();
        let (small, large) = (settings(small), settings(large));
        std::thread::spawn(move || {
            let mut reloads = 0u32;
            for i in 0..2_000 {
                guards
                    .reload(if i % 2 == 0 { &small } else { &large })
                    .unwrap();
                reloads += 1;
            }
            reloads
        })
    };
    for caller in callers {
        caller.await.unwrap();
    }
    let reloads = reloader.join().unwrap();
    assert_eq!(reloads, 2_000);
    assert_eq!(done.load(Ordering::Relaxed), 32 * 200);
    assert_eq!(
        admitted.load(Ordering::Relaxed) + refused.load(Ordering::Relaxed),
        32 * 200,
        "every call either ran once or was refused"
    );
    assert_eq!(sber.in_flight(), 0, "every permit came back");
    let snapshot = sber.breaker().snapshot();
    assert!(
        snapshot.calls <= 100 && snapshot.failures <= snapshot.calls,
        "{snapshot:?}"
    );
    // Whatever the breaker decided, the bulkhead's permits are all there.
    guards.manual("sber", ManualAction::Reset).unwrap();
    assert_eq!(
        sber.bulkhead_permits(),
        16,
        "the last reload's size: 20 × 0.8"
    );
    // All 16 permits are there to take, and no more.
    let mut held = Vec::new();
    for _ in 0..16 {
        held.push(hold(&sber).await.unwrap());
    }
    assert_eq!(sber.in_flight(), 16);
    assert!(hold(&sber).await.is_err(), "16 permits, not 17");
    drop(held);
    eprintln!(
        "reload storm: {reloads} reloads; {} calls, {} ran, {} refused, {} in flight after; window {}/{}",
        done.load(Ordering::Relaxed),
        admitted.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
        sber.in_flight(),
        snapshot.failures,
        snapshot.calls
    );
}

/// Reloads racing an operator's actions: every action takes effect as if alone (a
/// reload never changes the state), and the last action decides the state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_racing_manual_actions_never_undoes_one() {
    let guards = guards("cb_open_duration = 30");
    let reloader = {
        let guards = guards.clone();
        let (a, b) = (
            settings("cb_open_duration = 5"),
            settings("cb_open_duration = 6"),
        );
        std::thread::spawn(move || {
            for i in 0..2_000 {
                guards.reload(if i % 2 == 0 { &a } else { &b }).unwrap();
            }
        })
    };
    let actions = [
        ManualAction::ForceOpen,
        ManualAction::Disable,
        ManualAction::Reset,
    ];
    for i in 0..3_000 {
        let action = actions[i % 3];
        guards.manual("sber", action).unwrap();
        let expected = match action {
            ManualAction::ForceOpen => State::ForcedOpen,
            ManualAction::Disable => State::Disabled,
            ManualAction::Reset => State::Closed,
            other => unreachable!("not among the actions done here: {other}"),
        };
        assert_eq!(guards.get("sber").unwrap().breaker().state(), expected);
    }
    reloader.join().unwrap();
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert_eq!(
        guards.get("sber").unwrap().breaker().state(),
        State::ForcedOpen
    );
    let _ = Duration::ZERO;
}

/// `cb_mode` in the file: applied at startup and when a reload changes it; the state
/// says who set it; back to `auto`, only the file's own state is undone.
#[tokio::test(start_paused = true)]
async fn cb_mode_in_the_file_forces_a_breaker_open_and_back_keeping_what_it_knew() {
    use outbound_guard::SetBy;

    let started = guards("cb_mode = \"disabled\"");
    let sber = started.get("sber").unwrap();
    assert_eq!(sber.breaker().state(), State::Disabled);
    assert_eq!(sber.breaker().peek().set_by, Some(SetBy::File));

    let guards = guards("cb_window_size = 10\ncb_min_calls = 10");
    fail(&guards).await;
    succeed(&guards).await;
    let sber = guards.get("sber").unwrap();
    guards
        .reload(&settings(
            "cb_window_size = 10\ncb_min_calls = 10\ncb_mode = \"forced_open\"",
        ))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::ForcedOpen);
    assert_eq!(sber.breaker().snapshot().set_by, Some(SetBy::File));
    assert!(
        sber.call(async { Ok::<_, ()>(()) }).await.is_err(),
        "rejected"
    );
    // The same mode again changes nothing.
    guards
        .reload(&settings(
            "cb_window_size = 10\ncb_min_calls = 9\ncb_mode = \"forced_open\"",
        ))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::ForcedOpen);
    guards
        .reload(&settings("cb_window_size = 10\ncb_min_calls = 10"))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::Closed);
    assert_eq!(sber.breaker().peek().set_by, None);

    // An operator's action stands when the file goes back to auto.
    guards
        .reload(&settings(
            "cb_window_size = 10\ncb_min_calls = 10\ncb_mode = \"disabled\"",
        ))
        .unwrap();
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert_eq!(sber.breaker().peek().set_by, Some(SetBy::Operator));
    guards
        .reload(&settings("cb_window_size = 10\ncb_min_calls = 10"))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::ForcedOpen);
    assert_eq!(sber.breaker().peek().set_by, Some(SetBy::Operator));

    // The file asking for the state an operator already set is a no-op: the operator
    // still owns it, and the file's return to auto leaves it.
    guards
        .reload(&settings(
            "cb_window_size = 10\ncb_min_calls = 10\ncb_mode = \"forced_open\"",
        ))
        .unwrap();
    assert_eq!(sber.breaker().peek().set_by, Some(SetBy::Operator));
    guards
        .reload(&settings("cb_window_size = 10\ncb_min_calls = 10"))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::ForcedOpen);
    assert_eq!(sber.breaker().peek().set_by, Some(SetBy::Operator));
    // And an operator's no-op (forced open again) does not take over a state the file set.
    assert!(sber.breaker().act(outbound_guard::ManualAction::Reset));
    guards
        .reload(&settings(
            "cb_window_size = 10\ncb_min_calls = 10\ncb_mode = \"forced_open\"",
        ))
        .unwrap();
    assert!(
        !sber.breaker().act(outbound_guard::ManualAction::ForceOpen),
        "already forced open: a no-op"
    );
    assert_eq!(sber.breaker().peek().set_by, Some(SetBy::File));
    guards
        .reload(&settings("cb_window_size = 10\ncb_min_calls = 10"))
        .unwrap();
    assert_eq!(sber.breaker().state(), State::Closed);
}

#[test]
fn a_cb_mode_that_is_not_one_is_an_error_naming_the_key_and_the_modes() {
    let err =
        Settings::parse("[systems.sber]\ncb_mode = \"open\"\n", "resilience.toml").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("cb_mode"), "{text}");
    assert!(text.contains("\"forced_open\""), "{text}");
    assert!(text.contains("resilience.toml:2"), "{text}");
}

/// Calls admitted before a reload finish after it: they keep their permits until they
/// end, and each outcome lands once in the breaker's (resized) window; a call admitted
/// before the breaker opened is not counted in the open period's trials.
#[tokio::test(start_paused = true)]
async fn calls_in_flight_across_a_reload_keep_their_permits_and_count_once() {
    let before = "cb_window_size = 10\ncb_min_calls = 10\nmax_connections = 5\nbulkhead_wait = 0";
    let after = "cb_window_size = 4\ncb_min_calls = 4\nmax_connections = 10\nbulkhead_wait = 0";
    let guards = guards(before);
    let sber = guards.get("sber").unwrap();
    succeed(&guards).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(hold(&sber).await.unwrap());
    }
    assert_eq!(sber.in_flight(), 4);
    guards.reload(&settings(after)).unwrap();
    assert_eq!(sber.in_flight(), 4, "no permit revoked or made up");
    assert_eq!(sber.bulkhead_permits(), 8);
    assert_eq!(counts(sber.breaker()), (State::Closed, 0, 1));
    let first = held.remove(0);
    let _ = first.finish(Err(())).await;
    assert_eq!(counts(sber.breaker()), (State::Closed, 1, 2));
    let second = held.remove(0);
    let _ = second.finish(Ok(())).await;
    assert_eq!(counts(sber.breaker()), (State::Closed, 1, 3));
    // 2 of 4 under the new rules (0.5 by default) opens it...
    let third = held.remove(0);
    let _ = third.finish(Err(())).await;
    assert_eq!(sber.breaker().state(), State::Open);
    // ...and the last call, admitted while closed, is not counted in the open state.
    let last = held.remove(0);
    let _ = last.finish(Err(())).await;
    assert_eq!(sber.in_flight(), 0, "every permit came back");
    let snapshot = sber.breaker().snapshot();
    assert_eq!(
        (snapshot.failures, snapshot.calls),
        (2, 4),
        "the figures that opened it"
    );
}

/// A transition the settings file's `cb_mode` made says so (`Reason::Settings`), in the
/// observers' events and in the log's words; an operator's says `Reason::Manual`.
#[tokio::test(start_paused = true)]
async fn a_transition_says_whether_the_file_or_an_operator_made_it() {
    use outbound_guard::{Observer, Reason, Transition};

    #[derive(Default)]
    struct Reasons(std::sync::Mutex<Vec<(State, Reason)>>);
    impl Observer for Reasons {
        fn on_transition(&self, t: &Transition<'_>) {
            self.0.lock().unwrap().push((t.to, t.reason));
        }
    }

    let reasons = Arc::new(Reasons::default());
    let guards = without_log(Guards::builder(&settings("")))
        .observer(reasons.clone())
        .build();
    guards
        .reload(&settings("cb_mode = \"forced_open\""))
        .unwrap();
    guards.reload(&settings("")).unwrap();
    guards.manual("sber", ManualAction::ForceOpen).unwrap();
    assert_eq!(
        *reasons.0.lock().unwrap(),
        [
            (State::ForcedOpen, Reason::Settings(ManualAction::ForceOpen)),
            (State::Closed, Reason::Settings(ManualAction::Reset)),
            (State::ForcedOpen, Reason::Manual(ManualAction::ForceOpen)),
        ]
    );
    assert_eq!(
        Reason::Settings(ManualAction::ForceOpen).as_str(),
        "settings"
    );
}
