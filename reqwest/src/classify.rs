//! Which reqwest errors count against the breaker ([`is_transient`]), and the upstream's
//! retry hint in a response ([`retry_after`]).

use std::time::Duration;

/// Whether a reqwest error says the system is in trouble — the predicate a port's
/// `failure_if` calls on the `reqwest::Error` it wraps. The classification of
/// Microsoft.Extensions.Http.Resilience's transient predicate, for reqwest's kinds of
/// error (the guide counts what says the external system "clearly does not work"):
///
/// | the error | counts | why |
/// |---|---|---|
/// | a timeout (`is_timeout`: connect or read timeout, anywhere in the chain) | yes | the system did not answer in time |
/// | a connect error (`is_connect`: refused, unreachable, DNS, TLS handshake) | yes | the system cannot be reached |
/// | sending the request or reading the response failed (`is_request`, `is_body`: reset, closed mid-body) | yes | the connection broke under the call |
/// | a status error (`is_status`, from `error_for_status`) | as [`http_status::is_transient`](outbound_guard::http_status::is_transient) | 5xx, 408, 429 yes; other 4xx no |
/// | a builder error (`is_builder`: an invalid URL, a body that does not serialise) | no | the request never left: the caller's mistake |
/// | a body cut short while read (`is_decode` over a body or I/O error: a reset, a closed connection mid-body) | yes | the connection broke under the call |
/// | a decode error of a body that came whole (`is_decode` over a serde error: it does not parse) | no | the system answered; see below |
/// | a redirect error (`is_redirect`: a loop, too many hops) | no | the system answered, as it is configured |
/// | anything else | yes | as the guard counts any `Err` by default |
///
/// A **decode error** does not count: a server that answered (with a 2xx, as
/// `Response::json` reads only what came) is working; a body that does not parse is a
/// contract mismatch — a version skew, or a request the caller steered to the wrong
/// resource (a client-supplied `..%2F` in a path) — that opening the breaker cannot
/// cure and would turn into an outage for every caller. Log it, alert on it; do not
/// trip on it. A body cut short by the network, which reqwest also reports as
/// `is_decode` (from `bytes`, `text`, `json`), counts: the chain under it says so.
///
/// The timeout check comes first: a read timeout is also a request or body error.
///
/// # With `failure_if`
///
/// `#[circuit_breaker(failure_if = …)]` (and `#[adapter(failure_if = …)]`) takes a
/// predicate over the method's error, `fn(&E) -> bool`; by default every `Err` counts.
/// Give the port's error an `is_outage` that calls this on the `reqwest::Error` it
/// wraps, and [`outbound_guard::http_status::is_transient`] on a status it kept:
///
/// ```
/// #[derive(Debug, thiserror::Error)]
/// pub enum CustomerPortError {
///     #[error("no such customer")]
///     NotFound,
///     #[error("customer system answered {0}")]
///     Status(u16),
///     #[error("customer system: {0}")]
///     Http(#[from] reqwest::Error),
/// }
///
/// impl CustomerPortError {
///     /// `failure_if = CustomerPortError::is_outage`: only what says the customer
///     /// system is in trouble counts against its breaker.
///     pub fn is_outage(&self) -> bool {
///         match self {
///             CustomerPortError::NotFound => false,
///             CustomerPortError::Status(status) => outbound_guard::http_status::is_transient(*status),
///             CustomerPortError::Http(err) => outbound_guard_reqwest::is_transient(err),
///         }
///     }
/// }
///
/// assert!(CustomerPortError::Status(503).is_outage());
/// assert!(!CustomerPortError::Status(422).is_outage());
/// ```
///
/// and on the impl block (or one method):
///
/// ```ignore
/// #[outbound_guard::adapter(
///     error_map = CustomerPortError::system_unavailable,
///     failure_if = CustomerPortError::is_outage,
/// )]
/// impl CustomerPort for CustomerAdapter { /* … */ }
/// ```
///
/// A port error that keeps only a string of the reqwest error (to stay `Clone`) can
/// call this where it converts, and keep the answer in the variant.
pub fn is_transient(err: &reqwest::Error) -> bool {
    if err.is_timeout() {
        return true;
    }
    if let Some(status) = err.status() {
        return outbound_guard::http_status::is_transient(status.as_u16());
    }
    if err.is_decode() {
        // reqwest reports a body cut short while it was read (`bytes`, `json`) as a
        // decode error with the transport's error inside.
        return broke_in_transit(err);
    }
    !(err.is_builder() || err.is_redirect())
}

/// The upstream's retry hint in a response: `Retry-After` of a 429 or 503, in seconds
/// or as an HTTP date ([`http_status::retry_after`](outbound_guard::http_status::retry_after)).
/// Read it before `error_for_status` consumes the response (a `reqwest::Error` keeps the
/// status, not the headers), keep it in the port's error, and hand it to the breaker
/// with `retry_after` (`CallOptions::retry_after`, or the attribute's `retry_after =`):
/// if that failure opens the breaker, or finds it open, the open period lasts at least
/// the hint, capped by `cb_open_max`.
///
/// ```
/// use std::time::Duration;
///
/// #[derive(Debug)]
/// pub enum FiscalPortError {
///     /// 429 / 5xx, with the upstream's `Retry-After` if it sent one.
///     Busy { status: u16, retry_after: Option<Duration> },
///     Http(reqwest::Error),
/// }
///
/// impl FiscalPortError {
///     /// `retry_after = FiscalPortError::retry_after`.
///     pub fn retry_after(&self) -> Option<Duration> {
///         match self {
///             FiscalPortError::Busy { retry_after, .. } => *retry_after,
///             FiscalPortError::Http(_) => None,
///         }
///     }
/// }
///
/// async fn send(client: &reqwest::Client, url: &str) -> Result<String, FiscalPortError> {
///     let response = client.get(url).send().await.map_err(FiscalPortError::Http)?;
///     let status = response.status().as_u16();
///     if outbound_guard::http_status::is_transient(status) {
///         let retry_after = outbound_guard_reqwest::retry_after(&response);
///         return Err(FiscalPortError::Busy { status, retry_after });
///     }
///     response.text().await.map_err(FiscalPortError::Http)
/// }
/// ```
pub fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let header = response.headers().get(reqwest::header::RETRY_AFTER);
    outbound_guard::http_status::retry_after(
        response.status().as_u16(),
        header.map(reqwest::header::HeaderValue::as_bytes),
    )
}

/// Whether the chain under `err` holds a transport failure: reqwest's own body,
/// request or connect error, or an I/O error.
fn broke_in_transit(err: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(inner) = cause.downcast_ref::<reqwest::Error>() {
            if inner.is_body() || inner.is_request() || inner.is_connect() {
                return true;
            }
        }
        if cause.is::<std::io::Error>() {
            return true;
        }
        source = cause.source();
    }
    false
}

#[cfg(test)]
mod tests {
    //! Each class of error, from a real reqwest client against a server on 127.0.0.1.

    use std::collections::HashMap;
    use std::time::Duration;

    use axum::extract::Path;
    use axum::http::StatusCode;
    use axum::routing::get;
    use axum::Router;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use outbound_guard::http_status::is_transient as is_transient_status;

    use super::is_transient;

    /// `/status/{code}` answers `code`; `/hang` never answers; `/text` answers 200 with
    /// a body that is not JSON.
    async fn server() -> String {
        let app = Router::new()
            .route(
                "/status/{code}",
                get(|Path(code): Path<u16>| async move {
                    (StatusCode::from_u16(code).unwrap(), "status")
                }),
            )
            .route(
                "/busy/{code}/{after}",
                get(|Path((code, after)): Path<(u16, String)>| async move {
                    (
                        StatusCode::from_u16(code).unwrap(),
                        [(axum::http::header::RETRY_AFTER, after)],
                        "come back later",
                    )
                }),
            )
            .route("/hang", get(std::future::pending::<&'static str>))
            .route("/text", get(|| async { "this is not json" }));
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn client() -> reqwest::Client {
        reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(Duration::from_secs(2))
            .read_timeout(Duration::from_millis(300))
            .build()
            .unwrap()
    }

    /// The error of `GET url` after `error_for_status`, within 5 s.
    async fn error_of(url: &str) -> reqwest::Error {
        tokio::time::timeout(Duration::from_secs(5), async {
            client()
                .get(url)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .expect_err("the call should fail")
        })
        .await
        .expect("bounded")
    }

    /// A 429 and a 503 with `Retry-After` in seconds and as an HTTP date, through a real
    /// reqwest client; a 500's, or garbage, gives no hint.
    #[tokio::test]
    async fn retry_after_of_429_and_503_is_read_in_seconds_and_as_a_date() {
        let url = server().await;
        let hint = |path: String| async move {
            let response = client().get(path).send().await.unwrap();
            super::retry_after(&response)
        };
        assert_eq!(
            hint(format!("{url}/busy/429/120")).await,
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            hint(format!("{url}/busy/503/7")).await,
            Some(Duration::from_secs(7))
        );
        let in_a_minute = httpdate_in(Duration::from_secs(90));
        let dated = hint(format!("{url}/busy/503/{in_a_minute}")).await.unwrap();
        assert!(
            dated > Duration::from_secs(85) && dated <= Duration::from_secs(90),
            "{dated:?}"
        );
        assert_eq!(hint(format!("{url}/busy/500/120")).await, None);
        assert_eq!(hint(format!("{url}/busy/429/soon")).await, None);
        assert_eq!(hint(format!("{url}/busy/429/-5")).await, None);
        assert_eq!(hint(format!("{url}/status/429")).await, None);
    }

    /// An HTTP date `after` from now, percent-encoded for a path.
    fn httpdate_in(after: Duration) -> String {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now() + after);
        date.replace(' ', "%20").replace(',', "%2C")
    }

    /// The hint, kept in the port's error and read by `CallOptions::retry_after`, sets
    /// how long the breaker stays open.
    #[tokio::test]
    async fn a_429_with_retry_after_opens_the_breaker_for_as_long_as_it_asked() {
        #[derive(Debug)]
        struct Busy(Option<Duration>);
        let url = server().await;
        let settings = outbound_guard::Settings::parse(
            "[systems.sber]\ncb_window_size = 2\ncb_min_calls = 2",
            "inline",
        )
        .unwrap();
        let guard = outbound_guard::Guard::new(settings.system("sber").unwrap());
        let options = outbound_guard::CallOptions::new().retry_after(|e: &Busy| e.0);
        for _ in 0..2 {
            let answer = guard
                .call_judged(options, async {
                    let response = client()
                        .get(format!("{url}/busy/429/120"))
                        .send()
                        .await
                        .unwrap();
                    Err::<(), _>(Busy(super::retry_after(&response)))
                })
                .await;
            assert!(matches!(answer, Ok(Err(Busy(Some(_))))));
        }
        let snapshot = guard.breaker().snapshot();
        assert_eq!(snapshot.state, outbound_guard::State::Open);
        assert_eq!(snapshot.retry_hint, Some(Duration::from_secs(120)));
        assert!(snapshot.retry_after.unwrap() > Duration::from_secs(119));
    }

    #[tokio::test]
    async fn http_transient_statuses_count() {
        let url = server().await;
        for code in [500, 502, 503, 504, 408, 429] {
            let err = error_of(&format!("{url}/status/{code}")).await;
            assert!(err.is_status(), "{code}: {err:?}");
            assert!(is_transient(&err), "{code} should count");
            assert!(is_transient_status(code), "{code}");
        }
    }

    #[tokio::test]
    async fn http_caller_statuses_do_not_count() {
        let url = server().await;
        for code in [400, 401, 403, 404, 409, 422] {
            let err = error_of(&format!("{url}/status/{code}")).await;
            assert!(err.is_status(), "{code}: {err:?}");
            assert!(!is_transient(&err), "{code} should not count");
            assert!(!is_transient_status(code), "{code}");
        }
        for code in [200, 201, 204, 302, 304] {
            assert!(!is_transient_status(code), "{code}");
        }
    }

    #[tokio::test]
    async fn http_connection_refused_counts() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let err = error_of(&format!("http://{addr}/")).await;
        assert!(err.is_connect(), "{err:?}");
        assert!(is_transient(&err));
    }

    #[tokio::test]
    async fn http_read_timeout_counts() {
        let url = server().await;
        let err = error_of(&format!("{url}/hang")).await;
        assert!(err.is_timeout(), "{err:?}");
        assert!(is_transient(&err));
    }

    #[tokio::test]
    async fn http_reset_mid_body_counts() {
        // 200 with a Content-Length of 1000, 7 bytes of body, then a reset.
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0);
                request.extend_from_slice(&buf[..n]);
            }
            let head = b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\npartial";
            socket.write_all(head).await.unwrap();
            socket.flush().await.unwrap();
            socket.set_zero_linger().unwrap();
        });
        let err = tokio::time::timeout(Duration::from_secs(5), async {
            let response = client().get(&url).send().await.unwrap();
            response.bytes().await.unwrap_err()
        })
        .await
        .expect("bounded");
        // reqwest calls it a decode error, with the reset inside.
        assert!(err.is_decode() || err.is_body(), "{err:?}");
        assert!(is_transient(&err), "{err:?}");
    }

    #[tokio::test]
    async fn http_invalid_url_does_not_count() {
        let err = client().get("not a url").send().await.unwrap_err();
        assert!(err.is_builder(), "{err:?}");
        assert!(!is_transient(&err));
    }

    #[tokio::test]
    async fn http_body_that_does_not_serialise_does_not_count() {
        let url = server().await;
        // JSON object keys must be strings: a tuple key cannot be written.
        let body: HashMap<(u8, u8), u8> = HashMap::from([((1, 2), 3)]);
        let err = tokio::time::timeout(
            Duration::from_secs(5),
            client()
                .post(format!("{url}/status/200"))
                .json(&body)
                .send(),
        )
        .await
        .expect("bounded")
        .unwrap_err();
        assert!(err.is_builder(), "{err:?}");
        assert!(!is_transient(&err));
    }

    #[tokio::test]
    async fn http_decode_error_of_a_2xx_does_not_count() {
        let url = server().await;
        let err = tokio::time::timeout(Duration::from_secs(5), async {
            let response = client().get(format!("{url}/text")).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            response.json::<serde_json::Value>().await.unwrap_err()
        })
        .await
        .expect("bounded");
        assert!(err.is_decode(), "{err:?}");
        assert!(!is_transient(&err));
    }
}
