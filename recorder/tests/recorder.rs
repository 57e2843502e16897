//! The recorder through its public API, as a service uses it: given to real guards as
//! an observer, and its file read back.

use std::sync::Arc;
use std::time::Duration;

use outbound_guard::{CallEvent, Guard, Guards, Observer, Outcome, Settings};
use outbound_guard_recorder::{Recorder, RecorderOptions};
use serde_json::Value;

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("og-record-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(start_paused = true)]
async fn every_call_and_transition_is_one_line_with_the_guards_verdict() {
    let path = dir("lines").join("calls.jsonl");
    let settings = Settings::parse(
        "[systems.sber]\ncb_min_calls = 3\ncb_window_size = 3\ncb_failure_rate = 0.5\ntotal_timeout = \"2s\"\ncb_slow_threshold = \"1s\"\nread_timeout = \"1500ms\"\nconnect_timeout = \"500ms\"",
        "inline",
    )
    .unwrap();
    let recorder = Arc::new(Recorder::to_file(&path, RecorderOptions::default()).unwrap());
    let guard = Guard::builder(settings.system("sber").unwrap())
        .observer(recorder.clone())
        .build();
    let ok = guard
        .call(async {
            tokio::time::sleep(Duration::from_millis(250)).await;
            Ok::<_, ()>(())
        })
        .await;
    assert!(ok.is_ok());
    let _ = guard
        .call(async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok::<_, ()>(())
        })
        .await;
    let _ = guard.call(async { Err::<(), ()>(()) }).await;
    let refused = guard.call(async { Ok::<_, ()>(()) }).await;
    assert!(refused.is_err());
    recorder.flush();
    let lines = lines(&path);
    let calls: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("outcome").is_some())
        .collect();
    let outcomes: Vec<&str> = calls
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["success", "timeout", "failure", "rejected"]);
    assert_eq!(calls[0]["system"], "sber");
    assert_eq!(calls[0]["duration_ms"].as_f64(), Some(250.0));
    assert_eq!(calls[1]["duration_ms"].as_f64(), Some(2000.0));
    assert_eq!(calls[3]["cause"], "open");
    // Starts follow the clock: the timeout started 250 ms after the first call.
    let start = |i: usize| calls[i]["start"].as_f64().unwrap();
    assert!((start(1) - start(0) - 250.0).abs() < 0.01);
    let opened = lines
        .iter()
        .find(|l| l.get("transition").is_some())
        .unwrap();
    assert_eq!(opened["transition"], "open");
    assert_eq!(opened["from"], "closed");
    assert_eq!(opened["reason"], "failure_rate");
    assert!(opened["why"].as_str().unwrap().contains("opened"));
    // First, the limits the calls run under.
    assert_eq!(lines[0]["read_timeout_ms"].as_f64(), Some(1500.0));
    assert_eq!(lines[0]["total_timeout_ms"].as_f64(), Some(2000.0));
    let stats = recorder.stats();
    assert_eq!(stats.written, 6);
    assert_eq!(stats.dropped_queue_full + stats.dropped_write_error, 0);
}

#[tokio::test]
async fn the_file_rotates_by_size_and_keeps_so_many() {
    let dir = dir("rotate");
    let path = dir.join("calls.jsonl");
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let options = RecorderOptions::default().max_bytes(1000).keep(2);
    let recorder = Arc::new(Recorder::to_file(&path, options).unwrap());
    let guard = Guard::builder(settings.system("sber").unwrap())
        .observer(recorder.clone())
        .build();
    for _ in 0..100 {
        let _ = guard.call(async { Ok::<_, ()>(()) }).await;
    }
    recorder.flush();
    let stats = recorder.stats();
    assert_eq!(stats.written, 101, "100 calls and the limits");
    assert!(stats.rotations >= 5, "{stats:?}");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["calls.jsonl", "calls.jsonl.1", "calls.jsonl.2"]);
    for name in names {
        let size = std::fs::metadata(dir.join(name)).unwrap().len();
        assert!(size <= 1000, "{size}");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_full_disk_drops_records_never_calls() {
    // /dev/full fails every write with ENOSPC.
    let recorder = Arc::new(Recorder::to_file("/dev/full", RecorderOptions::default()).unwrap());
    let settings = Settings::parse("[systems.sber]", "inline").unwrap();
    let guard = Guard::builder(settings.system("sber").unwrap())
        .observer(recorder.clone())
        .build();
    for _ in 0..10 {
        assert!(guard.call(async { Ok::<_, ()>(1) }).await.is_ok());
    }
    recorder.flush();
    let stats = recorder.stats();
    assert_eq!(
        (stats.written, stats.dropped_write_error),
        (0, 11),
        "10 calls and the limits"
    );
}

#[test]
fn a_full_queue_drops_and_counts() {
    let path = dir("queue").join("calls.jsonl");
    let recorder = Recorder::to_file(&path, RecorderOptions::default().queue(1)).unwrap();
    // Far more records than a queue of one holds while the writer takes them.
    let event = CallEvent {
        system: "sber",
        outcome: Outcome::Success,
        elapsed: Some(Duration::from_millis(1)),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        for _ in 0..100_000 {
            recorder.on_call(&event);
        }
    });
    recorder.flush();
    let stats = recorder.stats();
    assert!(stats.dropped_queue_full > 0, "{stats:?}");
    assert_eq!(stats.written + stats.dropped_queue_full, 100_000);
}

/// A failure that lasted the client's whole `read_timeout` was cut by it: recorded as a
/// `timeout` marked `"cut":"read_timeout"`, so that a replay knows it lasted at least
/// that long. One that ended sooner is a failure; after a reload, the new limit applies.
#[tokio::test(start_paused = true)]
async fn a_call_cut_by_the_read_timeout_is_recorded_as_cut() {
    let path = dir("cut").join("calls.jsonl");
    let text = |read: u32| {
        format!(
            "[systems.sber]\nread_timeout = \"{read}ms\"\ntotal_timeout = \"2s\"\ncb_slow_threshold = \"1s\"\nconnect_timeout = \"50ms\""
        )
    };
    let settings = Settings::parse(&text(300), "inline").unwrap();
    let recorder = Arc::new(Recorder::to_file(&path, RecorderOptions::default()).unwrap());
    let guards = Guards::builder(&settings)
        .observer(recorder.clone())
        .build();
    let guard = guards.get("sber").unwrap();
    let fail_after = |ms: u64| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Err::<(), ()>(())
    };
    let _ = guard.call(fail_after(299)).await;
    let _ = guard.call(fail_after(300)).await;
    guards
        .reload(&Settings::parse(&text(500), "inline").unwrap())
        .unwrap();
    let _ = guard.call(fail_after(300)).await;
    let _ = guard.call(fail_after(500)).await;
    recorder.flush();
    let lines = lines(&path);
    let calls: Vec<(&str, Option<&str>)> = lines
        .iter()
        .filter(|l| l.get("outcome").is_some())
        .map(|l| (l["outcome"].as_str().unwrap(), l["cut"].as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("failure", None),
            ("timeout", Some("read_timeout")),
            ("failure", None),
            ("timeout", Some("read_timeout")),
        ]
    );
    let limits: Vec<f64> = lines
        .iter()
        .filter_map(|l| l["read_timeout_ms"].as_f64())
        .collect();
    assert_eq!(limits, [300.0, 500.0]);
}

/// Every line the recorder writes, of every kind (calls of each ending, a cut one, the
/// limits, observe mode, transitions enforced and observed), is a line of the format:
/// it reads as one, and is written again as the very same text.
#[tokio::test(start_paused = true)]
async fn every_line_it_writes_reads_as_the_format_and_is_written_again_as_itself() {
    use outbound_guard_recording::Line;

    let path = dir("format").join("calls.jsonl");
    let table = |name: &str, mode: &str| {
        format!(
            "[systems.{name}]\ncb_mode = \"{mode}\"\ncb_min_calls = 2\ncb_window_size = 2\ncb_failure_rate = 0.5\nread_timeout = \"300ms\"\ntotal_timeout = \"2s\"\ncb_slow_threshold = \"1s\"\nconnect_timeout = \"50ms\"\n"
        )
    };
    let text = table("sber", "auto") + &table("customer", "observe");
    let settings = Settings::parse(&text, "inline").unwrap();
    let recorder = Arc::new(Recorder::to_file(&path, RecorderOptions::default()).unwrap());
    let guards = Guards::builder(&settings)
        .observer(recorder.clone())
        .build();
    for system in ["sber", "customer"] {
        let guard = guards.get(system).unwrap();
        let _ = guard
            .call(async {
                tokio::time::sleep(Duration::from_micros(12_345)).await;
                Ok::<_, ()>(())
            })
            .await;
        let _ = guard
            .call(async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Err::<(), ()>(())
            })
            .await;
        let _ = guard.call(async { Err::<(), ()>(()) }).await;
        let _ = guard.call(async { Ok::<_, ()>(()) }).await;
    }
    recorder.flush();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for written in text.lines() {
        let line = Line::parse(written).unwrap_or_else(|e| panic!("{e}: {written}"));
        assert_eq!(line.to_json(), written);
        kinds.insert(match line {
            Line::Call(call) => format!("{:?} {:?} {:?}", call.outcome, call.cut, call.cause),
            Line::Transition(t) => format!("transition observing {}", t.observing),
            Line::Limits(_) => "limits".to_owned(),
            Line::Observing(o) => format!("observing {}", o.observing),
        });
    }
    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
    assert_eq!(
        kinds,
        [
            "Failure None None",
            "Rejected None Some(Open)",
            "Success None None",
            "Timeout Some(ReadTimeout) None",
            "limits",
            "observing true",
            "transition observing false",
            "transition observing true",
        ],
        "{text}"
    );
}

/// An adaptive bulkhead's limit is recorded as it moves, on the limits' line a reader
/// that does not know `bulkhead_limit` reads as the limits it always was: a real guard
/// in adaptive mode, 32 callers in front of an upstream of 8 workers of 100 ms each
/// behind a queue, whose workers drop to 2. The limit starts at a quarter of the
/// ceiling, climbs to
/// the ceiling, falls when the calls queue, and every change is a line, in order, the
/// last one the guard's limit.
#[tokio::test(start_paused = true)]
async fn an_adaptive_limit_is_recorded_as_it_moves_on_the_limits_line() {
    use outbound_guard_recording::Line;
    use tokio::sync::Semaphore;

    let path = dir("adaptive").join("calls.jsonl");
    let settings = Settings::parse(
        "[systems.sber]\nbulkhead = \"adaptive\"\nbulkhead_floor = 1\nmax_connections = 10\nread_timeout = \"1500ms\"\ntotal_timeout = \"2s\"\ncb_slow_threshold = \"1s\"\nconnect_timeout = \"500ms\"",
        "inline",
    )
    .unwrap();
    let recorder = Arc::new(Recorder::to_file(&path, RecorderOptions::default()).unwrap());
    let guards = Guards::builder(&settings)
        .observer(recorder.clone())
        .build();
    let guard = guards.get("sber").unwrap().clone();
    assert_eq!(guard.bulkhead_permits(), 8);
    let workers = Arc::new(Semaphore::new(8));
    let until = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut callers = Vec::new();
    for _ in 0..32 {
        let (guard, workers) = (guard.clone(), workers.clone());
        callers.push(tokio::spawn(async move {
            while tokio::time::Instant::now() < until {
                let workers = workers.clone();
                let answer = guard
                    .call(async move {
                        let _worker = workers.acquire().await.unwrap();
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        Ok::<_, ()>(())
                    })
                    .await;
                if answer.is_err() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    let at_eight = guard.bulkhead_limit();
    // Six of the eight workers gone: the calls queue at the upstream.
    let gone = workers.clone().acquire_many_owned(6).await.unwrap();
    for caller in callers {
        caller.await.unwrap();
    }
    drop(gone);
    recorder.flush();
    assert_eq!(at_eight, 8, "the limit found the ceiling");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut limits = Vec::new();
    for written in text.lines() {
        let line = Line::parse(written).unwrap_or_else(|e| panic!("{e}: {written}"));
        assert_eq!(line.to_json(), written);
        if let Line::Limits(l) = &line {
            // The timeouts repeated on every line: read alone, each is the limits.
            assert_eq!((l.read_timeout_ms, l.total_timeout_ms), (1500.0, 2000.0));
            limits.extend(l.bulkhead_limit);
        }
    }
    assert_eq!(
        limits.first(),
        Some(&2),
        "a replica starts at a quarter of its 8 permits: {limits:?}"
    );
    let top = limits.iter().position(|&l| l == 8).expect("climbed to 8");
    assert!(limits[..top].windows(2).all(|w| w[0] < w[1]), "{limits:?}");
    let low = *limits[top..].iter().min().unwrap();
    assert!(low <= 3, "fell to the 2 workers' worth: {limits:?}");
    assert_eq!(
        limits.last().map(|&l| l as usize),
        Some(guard.bulkhead_limit()),
        "{limits:?}"
    );
    assert_eq!(recorder.stats().dropped_queue_full, 0);
    println!("limits recorded: {limits:?}");
}

/// A fixed bulkhead writes no limit: its lines are the ones written before the
/// adaptive bulkhead existed.
#[tokio::test(start_paused = true)]
async fn a_fixed_bulkhead_writes_no_limit() {
    let path = dir("fixed").join("calls.jsonl");
    let settings = Settings::parse("[systems.sber]\nmax_connections = 10", "inline").unwrap();
    let recorder = Arc::new(Recorder::to_file(&path, RecorderOptions::default()).unwrap());
    let guards = Guards::builder(&settings)
        .observer(recorder.clone())
        .build();
    let guard = guards.get("sber").unwrap();
    for _ in 0..30 {
        let _ = guard.call(async { Ok::<_, ()>(()) }).await;
    }
    let more = Settings::parse("[systems.sber]\nmax_connections = 20", "inline").unwrap();
    guards.reload(&more).unwrap();
    recorder.flush();
    let lines = lines(&path);
    // The limits at build and at the reload, and the calls.
    assert_eq!(lines.len(), 32);
    assert!(lines.iter().all(|l| l.get("bulkhead_limit").is_none()));
}

/// A reload writes the limit it leaves: an adaptive bulkhead starts at a quarter of its
/// permits (2 of 8), a floor raised lifts it, a bulkhead turned
/// fixed writes its permits (and nothing after that).
#[tokio::test(start_paused = true)]
async fn a_reload_writes_the_limit_it_leaves() {
    let path = dir("reload-limit").join("calls.jsonl");
    let table = |more: &str| {
        Settings::parse(
            &format!("[systems.sber]\nmax_connections = 10\n{more}"),
            "inline",
        )
        .unwrap()
    };
    let recorder = Arc::new(Recorder::to_file(&path, RecorderOptions::default()).unwrap());
    let guards = Guards::builder(&table("bulkhead = \"adaptive\""))
        .observer(recorder.clone())
        .build();
    guards
        .reload(&table("bulkhead = \"adaptive\"\nbulkhead_floor = 3"))
        .unwrap();
    guards.reload(&table("")).unwrap();
    guards.reload(&table("cb_failure_rate = 0.4")).unwrap();
    recorder.flush();
    let limits: Vec<Option<u64>> = lines(&path)
        .iter()
        .map(|l| l.get("bulkhead_limit").and_then(Value::as_u64))
        .collect();
    // Each reload's limits line, then its limit's.
    assert_eq!(
        limits,
        [None, Some(2), None, Some(3), None, Some(8), None],
        "{limits:?}"
    );
}
