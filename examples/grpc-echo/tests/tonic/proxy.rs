//! A proxy in front of the gRPC server that sheds load with a plain HTTP answer, `503`
//! and `Retry-After` (a load balancer, an ingress): a real HTTP/2 server on 127.0.0.1
//! and a real tonic client through the layer. The layer counts the answer as gRPC's
//! mapping of the HTTP status says (`Unavailable`; tonic itself reports the HTML body it
//! cannot decode as `Internal`), and the breaker it opens stays open as long as the proxy
//! asked.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use outbound_guard::State;
use tonic::Code;

use super::{client, echo, guard_at, ROOMY};

/// An HTTP/2 server (h2c, as tonic's channel speaks it) answering every request with
/// `status`, `Retry-After: retry_after` and an HTML page.
async fn proxy(status: u16, retry_after: &'static str) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = service_fn(move |_request| async move {
                let page = Full::new(Bytes::from_static(b"<html>try later</html>"));
                let response = http::Response::builder()
                    .status(status)
                    .header("retry-after", retry_after)
                    .header("content-type", "text/html")
                    .body(page)
                    .unwrap();
                Ok::<_, Infallible>(response)
            });
            tokio::spawn(
                hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), answer),
            );
        }
    });
    addr
}

#[tokio::test]
async fn a_proxys_503_with_retry_after_keeps_the_breaker_open_as_long_as_it_asked() {
    for (status, asked, open_for) in [
        (503, "90", Duration::from_secs(90)),
        (429, "120", Duration::from_secs(120)),
        // Longer than `cb_open_max` (5 min by default): capped.
        (503, "86400", Duration::from_secs(300)),
        // Not a duration: no hint, the plain `cb_open_duration`.
        (503, "soon", Duration::from_secs(30)),
    ] {
        let addr = proxy(status, asked).await;
        let guard = guard_at(&format!("http://{addr}"), ROOMY);
        let mut client = client(&guard);
        for _ in 0..5 {
            client.echo(echo(Code::Ok)).await.unwrap_err();
        }
        let snapshot = guard.breaker().snapshot();
        assert_eq!(snapshot.state, State::Open, "{status} {asked}");
        assert_eq!(snapshot.open_for, Some(open_for), "{status} {asked}");
        // Refused now without reaching the proxy, as `Unavailable`.
        let refused = client.echo(echo(Code::Ok)).await.unwrap_err();
        assert_eq!(refused.code(), Code::Unavailable, "{status} {asked}");
    }
}
