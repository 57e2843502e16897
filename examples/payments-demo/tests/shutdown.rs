//! Graceful shutdown: SIGTERM and SIGINT both stop the service, which
//! stops accepting connections and lets every request in flight finish first.

mod common;

use std::time::Duration;

use payments_demo::bootstrap;

#[tokio::test]
async fn shutdown_drains_a_request_in_flight() {
    let h = common::start(None).await;
    // A customer lookup that takes 600 ms upstream.
    h.customer.faults().set_latency(Duration::from_millis(600));
    let listener = payments_demo::fakes::bind().await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bootstrap::serve_until(
        listener,
        h.container.router(),
        async move {
            let _ = stop_rx.await;
        },
    ));
    let client = h.client.clone();
    let target = format!("{url}/customers/c-1");
    let request = tokio::spawn(async move { client.get(target).send().await });
    // Wait for the call to be in flight at the upstream, then shut down.
    tokio::time::timeout(Duration::from_secs(5), async {
        while h.customer.in_flight() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the request reaches the upstream");
    let started = std::time::Instant::now();
    stop_tx.send(()).unwrap();

    // `serve_until` returns only once the request in flight is done: the process that
    // returns from it (and exits) cuts nothing short.
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops once drained")
        .unwrap()
        .unwrap();
    let drained = started.elapsed();
    eprintln!("serve_until returned {drained:?} after the signal");
    assert_eq!(
        h.customer.in_flight(),
        0,
        "serve_until returned while a request was still in flight"
    );
    let response = tokio::time::timeout(Duration::from_secs(5), request)
        .await
        .expect("bounded")
        .unwrap()
        .expect("the request in flight is answered, not reset");
    assert_eq!(response.status().as_u16(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["id"], "c-1");
    // Stopped: no new connection is accepted.
    let fresh = reqwest::Client::builder().no_proxy().build().unwrap();
    assert!(fresh
        .get(format!("{url}/health/ready"))
        .send()
        .await
        .is_err());
}

/// Sends `signal` (`TERM`, `INT`) to this very process.
fn raise(signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &std::process::id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

#[tokio::test]
async fn sigterm_and_sigint_are_both_shutdown_signals() {
    for (signal, name) in [("TERM", "SIGTERM"), ("INT", "SIGINT")] {
        let received = bootstrap::shutdown_signal().expect("install the handlers");
        raise(signal);
        let got = tokio::time::timeout(Duration::from_secs(5), received)
            .await
            .unwrap_or_else(|_| panic!("{name} not seen within 5 s"));
        assert_eq!(got, name);
    }
}
