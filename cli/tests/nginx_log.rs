//! A real nginx's access log, converted by `docs/recording/nginx.awk` and replayed.
//!
//! nginx (skipped where it is not installed, except under CI, which installs it)
//! proxies to the demo's fake upstreams on 127.0.0.1 and logs each request in the
//! format `docs/recording.md` recommends: a healthy request, one retried on a second upstream after the first answered 502 (the
//! log has `0.001, 1.000` and `502, 504`), and one the client gave up on (`499`). The
//! converter must make the retried request a failure lasting both tries, and the
//! abandoned one a timeout at the time the client waited.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::bin;
use outbound_guard::{Guard, Settings};
use outbound_guard_recorder::{Recorder, RecorderOptions};
use outbound_guard_tests::upstream::{FakeUpstream, Fault};
use serde_json::Value;

/// The log format `docs/recording.md` recommends.
const LOG_FORMAT: &str = "'$msec $upstream_response_time $upstream_status $request_time $status'";

/// The converter, run on `input`; `None` where awk cannot run.
fn convert(input: &str) -> Option<String> {
    let mut child = Process::new("awk")
        .args(["-v", "name=sber", "-f"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/recording/nginx.awk"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let output = child.wait_with_output().ok()?;
    assert!(output.status.success());
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn lines(converted: &str) -> Vec<Value> {
    converted
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_retried_request_is_one_failure_lasting_every_try() {
    // nginx writes a retried request's upstreams with a comma and a space.
    let Some(converted) = convert("1796395661.294 1.000, 2.000 502, 504 3.001\n") else {
        eprintln!("skipped: awk cannot run here");
        return;
    };
    let line = &lines(&converted)[0];
    assert_eq!(line["outcome"], "failure", "{converted}");
    assert_eq!(line["duration_ms"].as_f64(), Some(3000.0), "{converted}");
    assert_eq!(
        line["start"].as_f64(),
        Some(1_796_395_658_294.0),
        "{converted}"
    );
}

/// nginx serving `config` from `dir`, ended when dropped.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts nginx on `port` with the upstreams given (`/ok`, `/failing`, `/retried` on
/// the failing one then the hung one, `/hung`), or `None` where it is not installed or
/// cannot run.
fn nginx(dir: &Path, port: u16, healthy: u16, failing: u16, hung: u16) -> Option<Nginx> {
    let d = dir.display();
    let config = format!(
        r"worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
    log_format guard {LOG_FORMAT};
    access_log {d}/access.log guard;
    client_body_temp_path {d}/tmp;
    proxy_temp_path {d}/tmp;
    fastcgi_temp_path {d}/tmp;
    uwsgi_temp_path {d}/tmp;
    scgi_temp_path {d}/tmp;
    upstream healthy {{ server 127.0.0.1:{healthy}; }}
    upstream retried {{ server 127.0.0.1:{failing} max_fails=0; server 127.0.0.1:{hung} backup; }}
    upstream hung {{ server 127.0.0.1:{hung}; }}
    upstream failing {{ server 127.0.0.1:{failing}; }}
    server {{
        listen 127.0.0.1:{port};
        location /ok {{ proxy_pass http://healthy; }}
        location /retried {{
            proxy_pass http://retried;
            proxy_next_upstream error timeout http_502;
            proxy_read_timeout 1s;
        }}
        location /hung {{ proxy_pass http://hung; proxy_read_timeout 30s; }}
        location /failing {{ proxy_pass http://failing; }}
    }}
}}
"
    );
    std::fs::write(dir.join("nginx.conf"), config).unwrap();
    let child = ["nginx", "/usr/sbin/nginx"].iter().find_map(|program| {
        Process::new(program)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()
    })?;
    let mut nginx = Nginx(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        // Installed but unable to run here (no permission, no such user): skipped.
        if let Ok(Some(status)) = nginx.0.try_wait() {
            eprintln!(
                "nginx exited ({status}): {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
            return None;
        }
        assert!(
            Instant::now() < deadline,
            "nginx did not listen: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(nginx)
}

/// nginx in front of three fake upstreams (healthy, answering 502, hung), each kept
/// while it lives.
struct Proxy {
    port: u16,
    _nginx: Nginx,
    _upstreams: [FakeUpstream; 3],
}

impl Proxy {
    /// Started in `dir`; `None` (said on standard error) where nginx is not installed or
    /// cannot run, which fails the test under CI, which installs it (`.ci/run`).
    async fn start(dir: &Path) -> Option<Proxy> {
        let healthy = FakeUpstream::start().await;
        let failing = FakeUpstream::start().await;
        failing.always(Fault::Status(502));
        let hung = FakeUpstream::start().await;
        hung.always(Fault::Hang);
        let port = free_port();
        let ports = [&healthy, &failing, &hung].map(|u| u.addr().port());
        let Some(nginx) = nginx(dir, port, ports[0], ports[1], ports[2]) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "nginx is not installed, or cannot run: CI must run this test"
            );
            eprintln!("skipped: nginx is not installed, or cannot run here");
            return None;
        };
        Some(Proxy {
            port,
            _nginx: nginx,
            _upstreams: [healthy, failing, hung],
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_nginx_log_converts_and_replays() {
    let dir = std::env::temp_dir().join(format!("og-cli-nginx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let Some(proxy) = Proxy::start(&dir).await else {
        return;
    };
    let port = proxy.port;
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..3 {
        let ok = client.get(format!("{base}/ok")).send().await.unwrap();
        assert_eq!(ok.status(), 200);
    }
    let retried = client.get(format!("{base}/retried")).send().await.unwrap();
    assert_eq!(retried.status(), 504);
    // The client gives up after 300 ms: nginx logs 499.
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    assert!(impatient.get(format!("{base}/hung")).send().await.is_err());
    let log = dir.join("access.log");
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= 5 {
            break text;
        }
        assert!(Instant::now() < deadline, "the access log: {text:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let Some(converted) = convert(&text) else {
        eprintln!("skipped: awk cannot run here");
        return;
    };
    // Printed for the record (`--nocapture`).
    eprintln!("{text}\n{converted}");
    let calls = lines(&converted);
    let outcomes: Vec<&str> = calls
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["success", "success", "success", "failure", "timeout"],
        "{text}\n{converted}"
    );
    // The retried request: both tries, the second cut by nginx after 1 s.
    let log_lines: Vec<&str> = text.lines().collect();
    assert!(log_lines[3].contains(", "), "{}", log_lines[3]);
    let retried_ms = calls[3]["duration_ms"].as_f64().unwrap();
    assert!(
        (1000.0..3000.0).contains(&retried_ms),
        "{retried_ms} ms: {}",
        log_lines[3]
    );
    // The abandoned request: about as long as the client waited (300 ms by its clock;
    // nginx's starts when it has read the request).
    let abandoned_ms = calls[4]["duration_ms"].as_f64().unwrap();
    assert!(
        (250.0..2000.0).contains(&abandoned_ms),
        "{abandoned_ms} ms: {}",
        log_lines[4]
    );
    // Starts are the ends less the durations: in order, as the requests were made, to
    // nginx's resolution (a millisecond).
    let starts: Vec<f64> = calls.iter().map(|c| c["start"].as_f64().unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1] + 1.0), "{converted}");

    let recording = dir.join("calls.jsonl");
    std::fs::write(&recording, &converted).unwrap();
    let settings = dir.join("resilience.toml");
    std::fs::write(&settings, "[systems.sber]\n").unwrap();
    let output = bin()
        .args(["replay", recording.to_str().unwrap()])
        .args([
            "--settings",
            settings.to_str().unwrap(),
            "--json",
            "--strict",
        ])
        .output()
        .unwrap();
    let report = common::json_report(&output);
    assert_eq!(report["systems"]["sber"]["calls"], 5);
    // The guide's 35 s total_timeout is longer than the 300 ms the abandoned request
    // was allowed: what it would have answered later is not in the log, so no count
    // is given, and the reason is.
    let as_set = &report["systems"]["sber"]["replays"][0];
    assert!(as_set["failing_let_through"].is_null(), "{as_set}");
    assert!(
        as_set["cannot_tell_why"]["failing_let_through"]
            .as_str()
            .unwrap()
            .contains("total_timeout"),
        "{as_set}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The settings of the guard in front of nginx in the next test.
const BEHIND: &str = r#"[systems.sber]
cb_window_size = 20
cb_min_calls = 20
cb_failure_rate = 0.3
cb_open_duration = "6s"
cb_half_open_calls = 2
read_timeout = "1s"
total_timeout = "2s"
connect_timeout = "0.5s"
"#;

/// The access log of a proxy behind an enforcing guard: a real guard (with the
/// recorder) calls a real nginx 100 times a second for 17 s, while 2 calls in 5 fail
/// from the 2nd second to the 14th (40%, above the guard's 30%). The guard opens and
/// refuses most of that stretch; those calls never reach nginx. Replayed, the converted
/// log must say it has holes; find one incident, not one per cycle of trials; tell
/// the time to fail fast of the settings it ran with (the hole's start, not "never")
/// and of a stricter one (0.2: no later, exact); and say "cannot tell" for every figure a
/// looser setting (0.6, which in truth never opens) changes, never an exact count. The
/// recorder's file of the same run, which holds every refused call, has no hole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_behind_an_enforcing_guard_has_holes_that_leave_a_looser_setting_untold() {
    let dir = common::scratch("nginx-behind");
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let Some(proxy) = Proxy::start(&dir).await else {
        return;
    };
    let port = proxy.port;
    let settings = Settings::parse(BEHIND, "resilience.toml").unwrap();
    let recorder_file = dir.join("recorded.jsonl");
    let recorder = Arc::new(Recorder::to_file(&recorder_file, RecorderOptions::default()).unwrap());
    let guard = Guard::builder(settings.system("sber").unwrap())
        .observer(recorder.clone())
        .build();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let started = tokio::time::Instant::now();
    let mut running = Vec::new();
    for i in 0..1_700_u64 {
        let path = if (200..1_400).contains(&i) && matches!(i % 5, 1 | 3) {
            "failing"
        } else {
            "ok"
        };
        let url = format!("{base}/{path}");
        running.push(tokio::spawn(common::guarded_get(&guard, &client, &url)));
        tokio::time::sleep_until(started + Duration::from_millis(10 * (i + 1))).await;
    }
    let mut reached = 0;
    for call in running {
        reached += usize::from(call.await.unwrap());
    }
    recorder.flush();
    assert!(
        reached < 1_200,
        "the guard refused only {} calls",
        1_700 - reached
    );
    let log = dir.join("access.log");
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= reached {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {reached} logged",
            text.lines().count()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let Some(converted) = convert(&text) else {
        eprintln!("skipped: awk cannot run here");
        return;
    };
    let behind = dir.join("behind.jsonl");
    std::fs::write(&behind, &converted).unwrap();
    let settings_file = dir.join("resilience.toml");
    std::fs::write(&settings_file, BEHIND).unwrap();
    let replay = |recording: &Path, json: bool| {
        let mut command = bin();
        command
            .args(["replay", recording.to_str().unwrap()])
            .args(["--settings", settings_file.to_str().unwrap()])
            .args(["--compare", "cb_failure_rate=0.6"])
            .args(["--compare", "cb_failure_rate=0.2"]);
        if json {
            command.arg("--json");
        }
        command.output().unwrap()
    };
    let report = common::json_report(&replay(&behind, true));
    let sber = &report["systems"]["sber"];
    let holes = sber["holes"].as_array().unwrap();
    assert!(!holes.is_empty(), "no hole found: {sber}");
    assert!(
        holes[0]["calls_per_second_before"].as_f64().unwrap() > 50.0,
        "{holes:?}"
    );
    assert_eq!(
        sber["incidents"].as_array().unwrap().len(),
        1,
        "{}",
        sber["incidents"]
    );
    let replays = sber["replays"].as_array().unwrap();
    let (as_set, looser, stricter) = (&replays[0], &replays[1], &replays[2]);
    assert_eq!(looser["settings"], "cb_failure_rate=0.6");
    // The settings it ran with failed fast when the hole began, 0.13 s or so after the
    // first failure (13 calls at 100 a second; fewer milliseconds where a loaded machine
    // sent them in a bunch), not never.
    let fast = |r: &Value| r["incidents"][0]["to_fast_fail_ms"].as_f64();
    let as_set_fast = fast(as_set).expect("as set failed fast");
    assert!((0.0..2_000.0).contains(&as_set_fast), "{as_set_fast} ms");
    // No count is told where the holes would count, and no range claims to hold.
    for r in [as_set, looser, stricter] {
        assert_eq!(r["ranges"]["every_way"], false, "{}", r["settings"]);
        assert!(
            r["ranges"]["failing_let_through"].is_null(),
            "{}",
            r["ranges"]
        );
    }
    for key in ["failing_let_through", "healthy_refused", "waited_ms"] {
        for r in [looser, stricter] {
            let verdict = &r["verdicts"][key];
            assert_eq!(verdict["verdict"], "cannot tell", "{key}: {verdict}");
            // No number beside it, top level or per incident: the reason instead.
            assert!(r[key].is_null(), "{key}: {}", r[key]);
            assert!(r["cannot_tell_why"][key].is_string(), "{key}");
        }
    }
    for r in [looser, stricter] {
        let incident = &r["incidents"][0];
        assert!(incident["failing_let_through"].is_null(), "{incident}");
        assert!(
            incident["failing_let_through_cannot_tell"].is_string(),
            "{incident}"
        );
    }
    // The failing calls the settings it ran with let through are all in the log: kept.
    assert!(
        as_set["failing_let_through"].as_u64().unwrap() > 0,
        "{as_set}"
    );
    assert!(as_set["healthy_refused"].is_null(), "{as_set}");
    assert!(as_set["incidents"][0]["failing_let_through"].is_u64());
    // The stricter setting opens again after the first hole began, in the incident:
    // those openings rest on the holes (the calls missing there would have fed it).
    let hole_start = holes[0]["start_ms"].as_f64().unwrap();
    let after_hole: Vec<&Value> = stricter["openings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["at_ms"].as_f64().unwrap() >= hole_start)
        .collect();
    assert!(!after_hole.is_empty(), "{}", stricter["openings"]);
    assert!(
        after_hole.iter().all(|o| o["rests_on_holes"] == true),
        "{after_hole:?}"
    );
    assert!(as_set["openings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["rests_on_holes"] == false));
    // The looser setting's time to fast fail cannot be told (it had not failed fast when
    // the hole began); the stricter one's is told, exact and no later (sooner by about
    // five calls' 50 ms, unless a loaded machine sent them in one millisecond).
    let incident = |r: &Value| r["verdicts"]["to_fast_fail"][0].clone();
    assert_eq!(
        incident(looser)["verdict"],
        "cannot tell",
        "{}",
        incident(looser)
    );
    assert!(
        ["better", "same"].contains(&incident(stricter)["verdict"].as_str().unwrap()),
        "{}",
        incident(stricter)
    );
    let stricter_fast = fast(stricter).expect("0.2 failed fast");
    assert!(stricter_fast <= as_set_fast, "{stricter_fast} ms");
    assert_eq!(
        incident(stricter)["this"]["certainty"],
        "exact",
        "{}",
        incident(stricter)
    );
    // The screen says so in words.
    let screen = replay(&behind, false);
    let screen = String::from_utf8_lossy(&screen.stdout);
    // Printed for the record (`--nocapture`).
    eprintln!("{screen}");
    // Its lines fold wherever the numbers before put the width.
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("the recording has holes"), "{screen}");
    assert!(words.contains("record in the service"), "{screen}");
    // The picture shades the holes, and says what they are.
    let svg = dir.join("behind.svg");
    let drawn = bin()
        .args(["replay", behind.to_str().unwrap()])
        .args(["--settings", settings_file.to_str().unwrap()])
        .arg("--out")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        drawn.status.success(),
        "{}",
        String::from_utf8_lossy(&drawn.stderr)
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("a hole: its calls missing"), "{picture}");
    // The recorder's file of the same run holds the refused calls: no hole, one incident.
    let report = common::json_report(&replay(&recorder_file, true));
    let sber = &report["systems"]["sber"];
    assert_eq!(
        sber["holes"].as_array().unwrap().len(),
        0,
        "{}",
        sber["holes"]
    );
    assert_eq!(
        sber["incidents"].as_array().unwrap().len(),
        1,
        "{}",
        sber["incidents"]
    );
    // `KEEP_BEHIND=1` keeps the log, the recorder's file and the settings to look at.
    if std::env::var_os("KEEP_BEHIND").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
