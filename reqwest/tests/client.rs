//! The client builder against a real HTTP server on 127.0.0.1: the read timeout fires,
//! and the keep-alive pool holds `max_keepalive` idle connections.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use outbound_guard::SystemSettings;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the test server answers.
#[derive(Clone, Copy)]
enum Answer {
    /// `200 ok`, keeping the connection open for the next request.
    Ok,
    /// Reads the request and never answers.
    Never,
}

/// A tiny HTTP/1.1 server on 127.0.0.1; counts the connections it accepts.
async fn server(answer: Answer) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(connection(stream, answer));
        }
    });
    (url, accepted)
}

async fn connection(mut stream: TcpStream, answer: Answer) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        // One request: headers only (the tests send GETs).
        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let end = buffer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        buffer.drain(..end);
        match answer {
            Answer::Ok => {
                let response = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                if stream.write_all(response).await.is_err() {
                    return;
                }
            }
            Answer::Never => {
                // Hold the connection open without a byte of answer.
                std::future::pending::<()>().await;
            }
        }
    }
}

fn settings(read: Duration, keepalive: u32) -> SystemSettings {
    SystemSettings::builder("sber")
        .connect_timeout(Duration::from_secs(1))
        .read_timeout(read)
        .total_timeout(Duration::from_secs(60))
        .max_keepalive(keepalive)
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_read_timeout_fires_on_a_server_that_never_answers() {
    let (url, _) = server(Answer::Never).await;
    let read = Duration::from_millis(1500);
    let client = outbound_guard_reqwest::client_builder(&settings(read, 12))
        .no_proxy()
        .build()
        .unwrap();
    let started = Instant::now();
    // A bound far above the read timeout, so only a missing read timeout reaches it.
    let result = tokio::time::timeout(Duration::from_secs(20), client.get(&url).send()).await;
    let elapsed = started.elapsed();
    let error = result
        .expect("the read timeout did not fire within 20 s")
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert!(elapsed >= read, "fired after {elapsed:?}, before {read:?}");
}

async fn connections_for_three_calls(keepalive: u32) -> usize {
    let (url, accepted) = server(Answer::Ok).await;
    let client =
        outbound_guard_reqwest::client_builder(&settings(Duration::from_secs(10), keepalive))
            .no_proxy()
            .build()
            .unwrap();
    for _ in 0..3 {
        let response = client.get(&url).send().await.unwrap();
        assert_eq!(response.text().await.unwrap(), "ok");
    }
    accepted.load(Ordering::SeqCst)
}

#[tokio::test]
async fn the_keepalive_pool_reuses_connections_up_to_max_keepalive() {
    // Sequential calls reuse one idle connection when the pool keeps any...
    assert_eq!(connections_for_three_calls(12).await, 1);
    // ...and open one each when `max_keepalive = 0` keeps none.
    assert_eq!(connections_for_three_calls(0).await, 3);
}

#[test]
fn the_builder_takes_the_guides_defaults() {
    let defaults = SystemSettings::builder("sber").build().unwrap();
    // The builder accepts them: a client builds from the guide's defaults.
    outbound_guard_reqwest::client_builder(&defaults)
        .build()
        .unwrap();
}
