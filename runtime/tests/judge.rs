//! A client that is not HTTP, guarded with its own judge through the public extension
//! point (`Guard::call_judged`, `Judge`, `RunningCall`): a message producer speaking a
//! line protocol to a broker on 127.0.0.1. "Busy" answers count against the broker;
//! a message refused as too large is the caller's mistake and counts as a success. A
//! judge that panics, or drops the running call, leaks no permit and wedges nothing.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use outbound_guard::{Cause, CircuitBreakerError, Guard, Judge, RunningCall, State, Verdict};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::TcpStream;

use common::{counts, system};

/// A broker on 127.0.0.1: answers each `SEND <bytes>` line with `OK <offset>`, `BUSY`
/// while told to be busy, or `TOO_LARGE` for more than 1,000 bytes. Counts the lines.
struct Broker {
    addr: std::net::SocketAddr,
    busy: Arc<std::sync::atomic::AtomicBool>,
    lines: Arc<AtomicUsize>,
}

impl Broker {
    fn start() -> Broker {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let busy = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let lines = Arc::new(AtomicUsize::new(0));
        let (b, l) = (busy.clone(), lines.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (b, l) = (b.clone(), l.clone());
                std::thread::spawn(move || {
                    let mut out = stream.try_clone().unwrap();
                    let mut offset = 0_u64;
                    for line in BufReader::new(stream).lines() {
                        let Ok(line) = line else { return };
                        l.fetch_add(1, Ordering::SeqCst);
                        let size: usize = line
                            .strip_prefix("SEND ")
                            .and_then(|n| n.parse().ok())
                            .unwrap_or(0);
                        let answer = if b.load(Ordering::SeqCst) {
                            "BUSY".to_owned()
                        } else if size > 1_000 {
                            "TOO_LARGE".to_owned()
                        } else {
                            offset += 1;
                            format!("OK {offset}")
                        };
                        if writeln!(out, "{answer}").is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Broker { addr, busy, lines }
    }
}

#[derive(Debug, PartialEq)]
enum SendError {
    BrokerBusy,
    TooLarge,
    Io(String),
}

/// The producer: one connection, one line out and one back per message.
struct Producer {
    connection: tokio::sync::Mutex<AsyncBufReader<TcpStream>>,
}

impl Producer {
    async fn connect(broker: &Broker) -> Producer {
        let stream = TcpStream::connect(broker.addr).await.unwrap();
        Producer {
            connection: tokio::sync::Mutex::new(AsyncBufReader::new(stream)),
        }
    }

    async fn send(&self, bytes: usize) -> Result<u64, SendError> {
        let io = |e: std::io::Error| SendError::Io(e.to_string());
        let mut connection = self.connection.lock().await;
        let line = format!("SEND {bytes}\n");
        connection
            .get_mut()
            .write_all(line.as_bytes())
            .await
            .map_err(io)?;
        let mut answer = String::new();
        connection.read_line(&mut answer).await.map_err(io)?;
        match answer.trim() {
            "BUSY" => Err(SendError::BrokerBusy),
            "TOO_LARGE" => Err(SendError::TooLarge),
            ok => ok
                .strip_prefix("OK ")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| SendError::Io(format!("unexpected answer `{ok}`"))),
        }
    }
}

/// The producer's judge: a busy broker or a broken connection counts as a failure; a
/// message the broker refused for itself does not.
struct Sent;

impl Judge<Result<u64, SendError>> for Sent {
    type Output = Result<u64, SendError>;

    fn judge(
        &mut self,
        sent: Result<u64, SendError>,
        mut call: RunningCall,
    ) -> Result<Self::Output, CircuitBreakerError> {
        let failed =
            call.poll_call(|| matches!(sent, Err(SendError::BrokerBusy | SendError::Io(_))));
        let _ = call.finish(Verdict::new(failed));
        Ok(sent)
    }
}

fn producer_guard() -> Guard {
    Guard::new(&system(
        "cb_window_size = 4\ncb_min_calls = 4\ncb_failure_rate = 0.5\ncb_open_duration = 30",
    ))
}

#[tokio::test]
async fn a_producers_judge_counts_a_busy_broker_and_not_a_message_too_large() {
    let broker = Broker::start();
    let producer = Producer::connect(&broker).await;
    let guard = producer_guard();
    // Too large, again and again: the broker answers, it is not failing.
    for _ in 0..6 {
        let sent = guard.call_judged(Sent, producer.send(5_000)).await;
        assert_eq!(sent.unwrap(), Err(SendError::TooLarge));
    }
    assert_eq!(counts(guard.breaker()), (State::Closed, 0, 4));
    assert_eq!(
        guard.call_judged(Sent, producer.send(10)).await.unwrap(),
        Ok(1)
    );
    // Busy: two of the window's four fail, and it opens.
    broker.busy.store(true, Ordering::SeqCst);
    for _ in 0..2 {
        let sent = guard.call_judged(Sent, producer.send(10)).await;
        assert_eq!(sent.unwrap(), Err(SendError::BrokerBusy));
    }
    assert_eq!(guard.breaker().state(), State::Open);
    let before = broker.lines.load(Ordering::SeqCst);
    let refused = guard
        .call_judged(Sent, producer.send(10))
        .await
        .expect_err("open: refused");
    assert!(matches!(refused.cause(), Cause::Open { .. }), "{refused}");
    assert_eq!(
        broker.lines.load(Ordering::SeqCst),
        before,
        "nothing sent while open"
    );
    assert_eq!(guard.in_flight(), 0);
}

/// A judge that panics while reading the answer.
struct Panics;

impl Judge<Result<u64, SendError>> for Panics {
    type Output = Result<u64, SendError>;

    fn judge(
        &mut self,
        _: Result<u64, SendError>,
        mut call: RunningCall,
    ) -> Result<Self::Output, CircuitBreakerError> {
        call.poll_call(|| panic!("a judge's bug"))
    }
}

/// A judge that returns without finishing its call.
struct Forgets;

impl Judge<Result<u64, SendError>> for Forgets {
    type Output = Result<u64, SendError>;

    fn judge(
        &mut self,
        sent: Result<u64, SendError>,
        call: RunningCall,
    ) -> Result<Self::Output, CircuitBreakerError> {
        drop(call);
        Ok(sent)
    }
}

#[tokio::test]
async fn a_judge_that_panics_counts_a_failure_and_one_that_forgets_counts_nothing() {
    let broker = Broker::start();
    let producer = Arc::new(Producer::connect(&broker).await);
    let guard = producer_guard();
    let (g, p) = (guard.clone(), producer.clone());
    let panicked = tokio::spawn(async move { g.call_judged(Panics, p.send(10)).await }).await;
    assert!(
        panicked.unwrap_err().is_panic(),
        "the judge's panic unwinds on"
    );
    assert_eq!(
        counts(guard.breaker()),
        (State::Closed, 1, 1),
        "counted failing"
    );
    assert_eq!(guard.in_flight(), 0, "its permit went back");
    let sent = guard.call_judged(Forgets, producer.send(10)).await;
    assert_eq!(sent.unwrap(), Ok(2));
    assert_eq!(
        counts(guard.breaker()),
        (State::Closed, 1, 1),
        "nothing counted"
    );
    assert_eq!(guard.in_flight(), 0);
    // Neither wedged the guard: the next calls count as usual.
    for offset in 3..6 {
        let sent = guard.call_judged(Sent, producer.send(10)).await;
        assert_eq!(sent.unwrap(), Ok(offset));
    }
    assert_eq!(counts(guard.breaker()), (State::Closed, 1, 4));
}
