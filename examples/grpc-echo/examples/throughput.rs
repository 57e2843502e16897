//! What the gRPC layer costs a tonic client, side by side with the raw channel in one
//! run, alternating raw and layer round by round so that the machine's noise shows:
//!
//! 1. unary calls per second, one caller after another, over one channel;
//! 2. the same with 8 and 32 concurrent callers sharing one channel, with
//!    `max_connections = 50` (a bulkhead of 40 that never fills), and 32 callers with
//!    the default `max_connections = 10` (a bulkhead of 8: the callers queue for it);
//! 3. the wall time of 8 concurrent calls the server answers after 300 ms.
//!
//! Each subject has its own channel (one HTTP/2 connection) to the echo server, which
//! runs on 127.0.0.1 in the same runtime. Besides calls per second, the CPU time per
//! call (client and server together, every thread of the process, from
//! `/proc/self/stat`): on a shared machine the rate says how much CPU the run got, the
//! CPU per call what a call costs. Run it in release:
//!
//! ```sh
//! cargo run --release -p grpc-echo-example --example throughput
//! ```
//!
//! `throughput count SUBJECT N` makes 200 calls, then N more, one after another, and
//! nothing else, for a count a shared machine cannot disturb: run it under
//! `valgrind --tool=callgrind` (instructions) or `--tool=dhat` (allocations) with two
//! values of N and divide the difference. SUBJECT is `raw`, `layer`, or `raw-timeout`:
//! the bare channel with the `grpc-timeout` the layer sends on (the default
//! `total_timeout`, 35 s), to tell what that header costs tonic from what the layer
//! costs itself.

use std::error::Error;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use grpc_echo_example::pb::echo_client::EchoClient;
use grpc_echo_example::pb::EchoRequest;
use grpc_echo_example::TestServer;
use outbound_guard::{Guard, Settings};
use outbound_guard_tonic::{GrpcGuardLayer, GrpcGuardService};
use tonic::transport::Channel;
use tower::Layer;

/// How long each round of calls per second lasts.
const ROUND: Duration = Duration::from_secs(2);
/// Rounds per subject in each calls-per-second case, alternating raw and layer.
const ROUNDS: usize = 5;
/// Rounds per subject of the 8 slow calls.
const SLOW_ROUNDS: usize = 5;

/// One subject: the generated client over the bare channel, or through the layer.
#[derive(Clone)]
enum Client {
    Raw(EchoClient<Channel>),
    Layer(EchoClient<GrpcGuardService<Channel>>),
}

impl Client {
    /// One unary call the server answers after `delay_ms`; whether it succeeded.
    async fn echo(&mut self, delay_ms: u32) -> bool {
        self.echo_within(delay_ms, None).await
    }

    /// [`echo`](Self::echo), with `timeout` as the request's `grpc-timeout`.
    async fn echo_within(&mut self, delay_ms: u32, timeout: Option<Duration>) -> bool {
        let mut request = tonic::Request::new(EchoRequest {
            message: "ping".into(),
            code: 0,
            delay_ms,
        });
        if let Some(timeout) = timeout {
            request.set_timeout(timeout);
        }
        match self {
            Client::Raw(client) => client.echo(request).await.is_ok(),
            Client::Layer(client) => client.echo(request).await.is_ok(),
        }
    }
}

/// A raw and a guarded client of `server`, each on a channel of its own, built from a
/// system whose `max_connections` is `max_connections` (the default when `None`).
async fn subjects(
    server: &TestServer,
    max_connections: Option<u32>,
) -> Result<[Client; 2], Box<dyn Error>> {
    let mut text = format!("[systems.echo]\nbase_url = \"{}\"\n", server.url());
    if let Some(max) = max_connections {
        let _ = writeln!(text, "max_connections = {max}");
    }
    let settings = Settings::parse(&text, "throughput")?;
    let echo = settings.system("echo").ok_or("no [systems.echo]")?;
    let endpoint = outbound_guard_tonic::endpoint(echo)?;
    let raw = EchoClient::new(endpoint.connect().await?);
    let layer = GrpcGuardLayer::new(Guard::new(echo)).layer(endpoint.connect().await?);
    Ok([Client::Raw(raw), Client::Layer(EchoClient::new(layer))])
}

/// The process's CPU time so far, user and system, every thread: `/proc/self/stat`'s
/// `utime` and `stime`, in ticks of 10 ms (Linux's `USER_HZ`); `None` without `/proc`.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let tick = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Duration::from_millis((tick(11)? + tick(12)?) * 10))
}

/// One round of one subject.
struct Round {
    /// Successful calls per second.
    rate: f64,
    /// CPU microseconds per successful call (NaN without `/proc`).
    cpu_us: f64,
    failed: u64,
}

/// `callers` tasks, each with its clone of `client`, calling one after another for
/// `round`.
async fn rate(client: &Client, callers: usize, round: Duration) -> Round {
    let (start, cpu_start) = (Instant::now(), cpu_time());
    let end = start + round;
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move {
                let (mut ok, mut failed) = (0u64, 0u64);
                while Instant::now() < end {
                    if client.echo(0).await {
                        ok += 1;
                    } else {
                        failed += 1;
                    }
                }
                (ok, failed)
            })
        })
        .collect();
    let (mut ok, mut failed) = (0, 0);
    for task in tasks {
        let (o, f) = task.await.expect("a caller panicked");
        ok += o;
        failed += f;
    }
    let cpu = cpu_start.zip(cpu_time()).map(|(from, to)| to - from);
    Round {
        rate: ok as f64 / start.elapsed().as_secs_f64(),
        cpu_us: cpu.map_or(f64::NAN, |cpu| cpu.as_secs_f64() * 1e6 / ok as f64),
        failed,
    }
}

/// The wall time of `calls` concurrent calls the server answers after `delay_ms`.
async fn wall(client: &Client, calls: usize, delay_ms: u32) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = (0..calls)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move { assert!(client.echo(delay_ms).await, "a slow call failed") })
        })
        .collect();
    for task in tasks {
        task.await.expect("a caller panicked");
    }
    start.elapsed()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        f64::midpoint(values[mid - 1], values[mid])
    } else {
        values[mid]
    }
}

/// The median of each column of `rows`.
fn medians<const N: usize>(rows: &[[f64; N]]) -> [f64; N] {
    std::array::from_fn(|column| median(rows.iter().map(|row| row[column]).collect()))
}

/// Both subjects, `ROUNDS` alternating rounds each: one table row per pair of rounds,
/// then the median of each column (a ratio's median is that of the pairs' ratios,
/// which a change of the machine's speed between pairs does not skew).
async fn compare(label: &str, [raw, layer]: &[Client; 2], callers: usize) {
    // A short warm-up of both: connections up, pools and allocator settled.
    rate(raw, callers, Duration::from_millis(300)).await;
    rate(layer, callers, Duration::from_millis(300)).await;
    let print = |round: &str, [r, l, rate, r_cpu, l_cpu, cpu]: [f64; 6], failed: &str| {
        println!(
            "{label:<28} {round:<7} {r:>8.0} {l:>8.0} {rate:>5.2}   {r_cpu:>6.1} {l_cpu:>6.1} {cpu:>5.2}{failed}"
        );
    };
    let mut rows = Vec::new();
    for i in 1..=ROUNDS {
        let r = rate(raw, callers, ROUND).await;
        let l = rate(layer, callers, ROUND).await;
        let failed = if r.failed + l.failed > 0 {
            format!("  failed: raw {}, layer {}", r.failed, l.failed)
        } else {
            String::new()
        };
        let row = [
            r.rate,
            l.rate,
            l.rate / r.rate,
            r.cpu_us,
            l.cpu_us,
            l.cpu_us / r.cpu_us,
        ];
        print(&format!("round {i}"), row, &failed);
        rows.push(row);
    }
    print("median", medians(&rows), "");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let server = TestServer::start().await?;
    let roomy = subjects(&server, Some(50)).await?;
    let default = subjects(&server, None).await?;

    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [count, subject, calls] = &args[..] {
        if count != "count" {
            return Err(format!("unknown mode `{count}`").into());
        }
        let [raw, layer] = roomy;
        let (mut client, timeout) = match subject.as_str() {
            "raw" => (raw, None),
            "raw-timeout" => (raw, Some(Duration::from_secs(35))),
            "layer" => (layer, None),
            other => return Err(format!("unknown subject `{other}`").into()),
        };
        for _ in 0..200 + calls.parse::<u32>()? {
            assert!(client.echo_within(0, timeout).await, "a call failed");
        }
        return Ok(());
    }
    println!(
        "{} worker threads (client and server share them); {} s rounds\n",
        std::thread::available_parallelism()?,
        ROUND.as_secs()
    );

    println!(
        "{:<36} {:>8} {:>8} {:>5}   {:>6} {:>6} {:>5}",
        "calls/s | CPU µs per call", "raw", "layer", "ratio", "raw", "layer", "ratio"
    );
    compare("1 caller, max_conn 50", &roomy, 1).await;
    compare("8 callers, max_conn 50", &roomy, 8).await;
    compare("32 callers, max_conn 50", &roomy, 32).await;
    compare("32 callers, max_conn 10 (8)", &default, 32).await;

    println!(
        "\n{:<36} {:>8} {:>8} {:>5}",
        "8 concurrent 300 ms calls, ms", "raw", "layer", "ratio"
    );
    let [raw, layer] = &default;
    let label = "max_conn 10 (bulkhead 8)";
    let print = |round: &str, [r, l, ratio]: [f64; 3]| {
        println!("{label:<28} {round:<7} {r:>8.1} {l:>8.1} {ratio:>5.2}");
    };
    let mut rows = Vec::new();
    for i in 1..=SLOW_ROUNDS {
        let r = wall(raw, 8, 300).await.as_secs_f64() * 1e3;
        let l = wall(layer, 8, 300).await.as_secs_f64() * 1e3;
        print(&format!("round {i}"), [r, l, l / r]);
        rows.push([r, l, l / r]);
    }
    print("median", medians(&rows));
    Ok(())
}
